// Unary operators on floating dtypes, one table row each: exp, log, log1p, sqrt, rsqrt, sin,
// cos, tanh, erf, sigmoid, gelu, softplus.
#include <cmath>
#include <numbers>

#include "janus/ops/ops.h"

#include "../nn/post_op.h"
#include "unary_op.h"
#include "vector_math.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

constexpr double kTwoOverSqrtPi = 2.0 * std::numbers::inv_sqrtpi;
constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
constexpr double kInvSqrt2 = 1.0 / std::numbers::sqrt2;

}  // namespace

JANUS_DEFINE_OP({floating_unary_op(
    "exp", "Exponential, elementwise.", [](auto x) { return vmath::exp(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * g.y(0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "log", "Natural logarithm, elementwise (nan below 0, -inf at 0).",
    [](auto x) { return std::log(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / g.x(0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "log1p", "log(1 + x), elementwise, accurate near 0.", [](auto x) { return std::log1p(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / (g.x(0) + 1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "sqrt", "Square root, elementwise (nan below 0).", [](auto x) { return std::sqrt(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / g.y(0) * 0.5}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "rsqrt", "1 / sqrt(x), elementwise.", [](auto x) { return decltype(x)(1) / std::sqrt(x); },
    // y = x^(-1/2): dx = -0.5 * y / x * dy.
    [](const GradArgs& g) -> Grads { return {g.dy(0) * g.y(0) / g.x(0) * -0.5}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "sin", "Sine, elementwise (radians).", [](auto x) { return std::sin(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * cos(g.x(0))}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "cos", "Cosine, elementwise (radians).", [](auto x) { return std::cos(x); },
    [](const GradArgs& g) -> Grads { return {negative(g.dy(0) * sin(g.x(0)))}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "tanh", "Hyperbolic tangent, elementwise.", [](auto x) { return vmath::tanh(x); },
    [](const GradArgs& g) -> Grads {
      return {post_op_backward(Activation::kTanh, g.y(0), g.dy(0))};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "erf", "Gauss error function, elementwise.", [](auto x) { return std::erf(x); },
    [](const GradArgs& g) -> Grads {
      return {g.dy(0) * exp(negative(square(g.x(0)))) * kTwoOverSqrtPi};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "sigmoid", "Logistic function 1 / (1 + exp(-x)), elementwise.",
    [](auto x) { return vmath::sigmoid(x); },
    [](const GradArgs& g) -> Grads {
      return {post_op_backward(Activation::kSigmoid, g.y(0), g.dy(0))};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "gelu", "Gaussian error linear unit x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), elementwise.",
    [](auto x) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + std::erf(x * C(kInvSqrt2)));
    },
    // d/dx x Phi(x) = Phi(x) + x phi(x), phi the standard normal density.
    [](const GradArgs& g) -> Grads {
      const NDArray& x = g.x(0);
      const NDArray cdf = (erf(x * kInvSqrt2) + 1.0) * 0.5;
      const NDArray pdf = exp(square(x) * -0.5) * kInvSqrt2Pi;
      return {g.dy(0) * (cdf + x * pdf)};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "softplus", "log(1 + exp(x)), elementwise, without overflow.",
    // max(x, 0) + log1p(exp(-|x|)).
    [](auto x) {
      using C = decltype(x);
      return std::max(x, C(0)) + std::log1p(std::exp(-std::abs(x)));
    },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * sigmoid(g.x(0))}; })});

}  // namespace janus::ops

namespace janus {
namespace {
NDArray call_unary(const ops::OpDef& op, const NDArray& x) { return ops::invoke(op, {x})[0]; }
}  // namespace

NDArray exp(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("exp");
  return call_unary(op, x);
}
NDArray log(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("log");
  return call_unary(op, x);
}
NDArray log1p(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("log1p");
  return call_unary(op, x);
}
NDArray sqrt(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("sqrt");
  return call_unary(op, x);
}
NDArray rsqrt(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("rsqrt");
  return call_unary(op, x);
}
NDArray sin(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("sin");
  return call_unary(op, x);
}
NDArray cos(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("cos");
  return call_unary(op, x);
}
NDArray tanh(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("tanh");
  return call_unary(op, x);
}
NDArray erf(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("erf");
  return call_unary(op, x);
}
NDArray sigmoid(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("sigmoid");
  return call_unary(op, x);
}
NDArray gelu(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("gelu");
  return call_unary(op, x);
}
NDArray softplus(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("softplus");
  return call_unary(op, x);
}
}  // namespace janus
