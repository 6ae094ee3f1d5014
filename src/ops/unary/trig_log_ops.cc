// More unary operators on floating dtypes, one table row each: tan, the inverse trigonometric
// functions, the hyperbolic functions and their inverses, log2, log10, expm1, cbrt. Outside a
// function's domain the result is nan, as in NumPy (arcsin(2), log2(-1)).
#include <cmath>
#include <numbers>

#include "janus/ops/ops.h"

#include "unary_op.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

// 1 - x^2 and x^2 + s, the arguments of the inverse functions' derivatives.
NDArray one_minus_square(const NDArray& x) { return negative(square(x)) + 1.0; }

}  // namespace

JANUS_DEFINE_OP({floating_unary_op(
    "tan", "Tangent, elementwise (radians).", [](auto x) { return std::tan(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * (square(g.y(0)) + 1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "arcsin", "Inverse sine, elementwise, in [-pi/2, pi/2] (nan outside [-1, 1]).",
    [](auto x) { return std::asin(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * rsqrt(one_minus_square(g.x(0)))}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "arccos", "Inverse cosine, elementwise, in [0, pi] (nan outside [-1, 1]).",
    [](auto x) { return std::acos(x); },
    [](const GradArgs& g) -> Grads {
      return {negative(g.dy(0) * rsqrt(one_minus_square(g.x(0))))};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "arctan", "Inverse tangent, elementwise, in (-pi/2, pi/2).",
    [](auto x) { return std::atan(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / (square(g.x(0)) + 1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "sinh", "Hyperbolic sine, elementwise.", [](auto x) { return std::sinh(x); },
    [](const GradArgs& g) -> Grads {
      return {g.dy(0) * (exp(g.x(0)) + exp(negative(g.x(0)))) * 0.5};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "cosh", "Hyperbolic cosine, elementwise.", [](auto x) { return std::cosh(x); },
    [](const GradArgs& g) -> Grads {
      return {g.dy(0) * (exp(g.x(0)) + negative(exp(negative(g.x(0))))) * 0.5};
    })});

JANUS_DEFINE_OP({floating_unary_op(
    "arcsinh", "Inverse hyperbolic sine, elementwise.", [](auto x) { return std::asinh(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * rsqrt(square(g.x(0)) + 1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "arccosh", "Inverse hyperbolic cosine, elementwise (nan below 1).",
    [](auto x) { return std::acosh(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * rsqrt(square(g.x(0)) + -1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "arctanh", "Inverse hyperbolic tangent, elementwise (nan outside [-1, 1], inf at 1).",
    [](auto x) { return std::atanh(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / one_minus_square(g.x(0))}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "log2", "Base-2 logarithm, elementwise (nan below 0, -inf at 0).",
    [](auto x) { return std::log2(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / (g.x(0) * std::numbers::ln2)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "log10", "Base-10 logarithm, elementwise (nan below 0, -inf at 0).",
    [](auto x) { return std::log10(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / (g.x(0) * std::numbers::ln10)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "expm1", "exp(x) - 1, elementwise, accurate near 0.", [](auto x) { return std::expm1(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * (g.y(0) + 1.0)}; })});

JANUS_DEFINE_OP({floating_unary_op(
    "cbrt", "Cube root, elementwise (negative for negative x).",
    [](auto x) { return std::cbrt(x); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) / (square(g.y(0)) * 3.0)}; })});

}  // namespace janus::ops
