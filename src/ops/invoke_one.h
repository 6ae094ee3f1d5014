// invoke_one: invoke for an operator with one output, without the vector of outputs. Private to
// src/ops: the path of the elementwise operators' functions (janus::add, ...).
#pragma once

#include <initializer_list>
#include <span>

#include "janus/ops/registry.h"

namespace janus::ops {

/// What invoke does for an operator with exactly one output (InternalError otherwise),
/// returning that output without allocating a vector for it.
NDArray invoke_one(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs = {});
inline NDArray invoke_one(const OpDef& op, std::initializer_list<NDArray> inputs,
                          Attrs attrs = {}) {
  return invoke_one(op, std::span<const NDArray>(inputs.begin(), inputs.size()), std::move(attrs));
}

/// invoke_one writing the output into `out` when that is defined (as invoke_to does) and
/// returning it; a new array when it is not. A gradient rule's way to use
/// GradArgs::grad_buffer.
NDArray invoke_one_to(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs, NDArray out);
inline NDArray invoke_one_to(const OpDef& op, std::initializer_list<NDArray> inputs, Attrs attrs,
                             NDArray out) {
  return invoke_one_to(op, std::span<const NDArray>(inputs.begin(), inputs.size()),
                       std::move(attrs), std::move(out));
}

}  // namespace janus::ops
