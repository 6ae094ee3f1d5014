// Unary operators on every dtype, one table row each: negative, abs, square, sign, relu.
#include <cmath>
#include <type_traits>

#include "janus/ops/ops.h"

#include "../elementwise/relu_backward.h"
#include "../elementwise/relu_rule.h"
#include "unary_op.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

// Unsigned types (uint8, bool) are never negative: no `x < 0` on them.
template <typename C>
constexpr bool is_negative(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return false;
  } else {
    return x < C(0);
  }
}

}  // namespace

JANUS_DEFINE_OP({any_unary_op(
    "negative", "-x, elementwise (integers wrap around: -INT32_MIN is INT32_MIN, as in NumPy).",
    [](auto x) { return wrapping_neg(x); },
    [](const GradArgs& g) -> Grads { return {negative(g.dy(0))}; })});

JANUS_DEFINE_OP({any_unary_op(
    "abs", "Absolute value, elementwise (abs(INT32_MIN) wraps to INT32_MIN, as in NumPy).",
    [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_floating_point_v<C>) return std::abs(x);
      return is_negative(x) ? wrapping_neg(x) : x;
    },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * sign(g.x(0))}; })});

JANUS_DEFINE_OP({any_unary_op(
    "square", "x * x, elementwise (integers wrap around).",
    [](auto x) { return wrapping_mul(x, x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * g.x(0) * 2.0}; })});

JANUS_DEFINE_OP({any_unary_op(
    "sign", "-1, 0 or 1 by the sign of x, elementwise (nan stays nan); not differentiable.",
    [](auto x) {
      using C = decltype(x);
      if (is_negative(x)) return static_cast<C>(-1);
      return x > C(0) ? C(1) : x;  // 0 and nan are their own sign
    },
    nullptr)});

JANUS_DEFINE_OP({any_unary_op(
    "relu",
    "max(x, 0), elementwise. NaN stays NaN (as in PyTorch), and so does it in fully_connected "
    "and conv2d with activation \"relu\", the fused form that hybridize makes.",
    [](auto x) { return relu_value(x); },
    // From the output: y > 0 exactly where x > 0, and reading y instead of x lets a compiled
    // graph drop x after the forward (and fuse the relu into the product that made x).
    [](const GradArgs& g) -> Grads { return {relu_backward(g.y(0), g.dy(0))}; })});

}  // namespace janus::ops

namespace janus {
namespace {
NDArray call_unary(const ops::OpDef& op, const NDArray& x) { return ops::invoke(op, {x})[0]; }
}  // namespace

NDArray negative(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("negative");
  return call_unary(op, x);
}
NDArray abs(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("abs");
  return call_unary(op, x);
}
NDArray square(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("square");
  return call_unary(op, x);
}
NDArray sign(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("sign");
  return call_unary(op, x);
}
NDArray relu(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("relu");
  return call_unary(op, x);
}
}  // namespace janus
