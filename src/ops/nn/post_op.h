// The activation that fully_connected and conv{1,2,3}d apply to their result in the same call
// (kPostOpActivations: relu, sigmoid, tanh), and its gradient. Each is the very function of the
// operator of that name (relu_rule.h, vector_math.h, the same gradient expression), not oneDNN's
// post-op (its relu turns NaN into 0, its logistic differs in the last bit), so a graph whose
// activation the fuse_bias_activation pass moved into the call gives bit for bit what the
// separate calls give. Private to src/ops.
#pragma once

#include <cstdint>

#include "janus/base/error.h"
#include "janus/core/ndarray.h"
#include "janus/ops/activation.h"

#include "../elementwise/relu_rule.h"
#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "../unary/vector_math.h"

namespace janus::ops {

/// Calls `body(fn)` with the scalar function of post-op `a` (a captureless generic lambda, the
/// identity for kNone), so that a loop over it is compiled once per activation.
template <typename Body>
void with_post_op(Activation a, Body&& body) {
  switch (a) {
    case Activation::kNone:
      return body([](auto v) { return v; });
    case Activation::kRelu:
      return body([](auto v) { return relu_value(v); });
    case Activation::kSigmoid:
      return body([](auto v) { return vmath::sigmoid(v); });
    case Activation::kTanh:
      return body([](auto v) { return vmath::tanh(v); });
    default:
      break;
  }
  JANUS_THROW(InternalError, "activation '{}' is not a post-op", activation_name(a));
}

/// post-op `a` of one value (the reference loops).
template <typename T>
T post_op_value(Activation a, T v) {
  with_post_op(a, [&v](auto fn) { v = fn(v); });
  return v;
}

/// y[i] = a(y[i]) for i < n on the calling thread (nothing for kNone): a kernel's epilogue on
/// a block of outputs it just wrote.
inline void post_op_block(Activation a, float* y, int64_t n) {
  if (a == Activation::kNone) return;
  with_post_op(a, [&](auto fn) { simd::map1(y, y, n, fn); });
}

/// y[i] = a(y[i]) for i < n on the kernel's threads (nothing for kNone).
inline void post_op_in_place(Activation a, float* y, int64_t n, const RunContext& ctx) {
  if (a == Activation::kNone) return;
  parallel_for(n, ctx, [a, y](int64_t lo, int64_t hi) { post_op_block(a, y + lo, hi - lo); });
}

/// The gradient through post-op `a` from its output y: relu_backward for relu, dy y (1 - y)
/// for sigmoid and dy (1 - y²) for tanh, the expressions of the sigmoid and tanh operators'
/// own gradients (unary/floating_ops.cc calls this too); dy itself for kNone.
NDArray post_op_backward(Activation a, const NDArray& y, const NDArray& dy);

}  // namespace janus::ops
