// Rounding to integral values, elementwise, one table row each: floor, ceil, rint (np.trunc
// composes floor and ceil, so that ONNX, which has no truncation, exports it). The
// result keeps the input's dtype (integers and bool pass unchanged, as in NumPy); nan and inf
// stay themselves. The gradient is zero almost everywhere, so it is zero (MXNet's and
// PyTorch's rule), not "not differentiable": a loss through np.round still trains the rest.
#include <cmath>
#include <type_traits>

#include "janus/ops/ops.h"

#include "unary_op.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

Grads zero_gradient(const GradArgs& g) {
  const NDArray& x = g.x(0);
  return {zeros(x.shape(), x.dtype(), x.device())};
}

}  // namespace

JANUS_DEFINE_OP({any_unary_op(
    "floor", "The largest integral value not above x, elementwise; gradient zero.",
    [](auto x) {
      if constexpr (std::is_floating_point_v<decltype(x)>) return std::floor(x);
      return x;
    },
    zero_gradient)});

JANUS_DEFINE_OP({any_unary_op(
    "ceil", "The smallest integral value not below x, elementwise; gradient zero.",
    [](auto x) {
      if constexpr (std::is_floating_point_v<decltype(x)>) return std::ceil(x);
      return x;
    },
    zero_gradient)});

// std::nearbyint rounds in the current mode, round-to-nearest-even unless a program changed it
// (Janus never does): 0.5 -> 0, 1.5 -> 2, -2.5 -> -2, as NumPy's rint and around.
JANUS_DEFINE_OP({any_unary_op(
    "rint",
    "x rounded to the nearest integral value, halves to the even one, elementwise; "
    "gradient zero.",
    [](auto x) {
      if constexpr (std::is_floating_point_v<decltype(x)>) return std::nearbyint(x);
      return x;
    },
    zero_gradient)});

}  // namespace janus::ops
