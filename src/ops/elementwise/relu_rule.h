// relu's value and gradient at every input, NaN included, in one place: relu, relu_backward and
// the relu that fully_connected and conv2d apply to their result (nn/post_op.h) all use these, so
// an imperative relu and a fused one (hybridized) give bit-identical results. Private to src/ops.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "../op_utils.h"
#include "simd_loop.h"

namespace janus::ops {

/// max(x, 0) that keeps NaN, as PyTorch's relu does: NaN < 0 is false, so NaN passes through
/// (a NaN is a bug upstream that must stay visible, not turn into a plausible 0). -0 stays -0.
template <typename C>
constexpr C relu_value(C x) {
  if constexpr (std::is_unsigned_v<C>) {
    return x;
  } else {
    return x < C(0) ? C(0) : x;
  }
}

/// Whether relu passed its input through, judged from its output y: y > 0, or y NaN. relu's
/// gradient is dy there and 0 elsewhere, at 0 too (PyTorch's threshold_backward), so a NaN
/// forward gives a NaN-carrying gradient instead of silently dropping it.
template <typename C>
constexpr bool relu_passes(C y) {
  return !(y <= C(0));
}

/// relu's gradient dy where relu_passes(y), else +0, as a mask on dy's bits rather than a
/// select, which GCC may turn into a branch on y's sign (half mispredicted in a loop).
template <typename T>
T relu_masked(T y, T dy) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  return std::bit_cast<T>(std::bit_cast<U>(dy) & -U(relu_passes(y)));
}

}  // namespace janus::ops
