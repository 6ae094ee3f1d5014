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

}  // namespace janus::ops
