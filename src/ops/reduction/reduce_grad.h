// Pieces shared by the max/min/prod/argmax/argmin operators: the reduced axes folded into one
// trailing axis (for gradients), the empty-reduction check and the arg-extremum loop. Private
// to src/ops.
#pragma once

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include "janus/ops/ops.h"

#include "reduce.h"

namespace janus::ops {

/// x transposed so that the reduced axes come last, then reshaped to [outer, reduced].
struct FoldedAxes {
  NDArray x2;                 // [outer, reduced]
  Shape permuted;             // x's shape with the reduced axes moved last
  std::vector<int64_t> perm;  // the transpose that moved them
  int64_t outer = 1, reduced = 1;
};
FoldedAxes fold_reduced_axes(std::string_view op, const NDArray& x,
                             const std::vector<int64_t>& axes);
/// A [outer, reduced] array back to x's layout: the inverse of fold_reduced_axes.
NDArray unfold_reduced_axes(const NDArray& g2, const FoldedAxes& f);

/// Gradient of max (is_max) or min: dy goes to the first extreme element of each reduced block
/// (argmax/argmin, then scatter_add), zero elsewhere.
std::vector<NDArray> extremum_grad(const GradArgs& g, bool is_max);

/// Shape rule of max/min (attributes axes, keepdims): infer_reduce, and a ValueError naming the
/// operator when a non-empty output would reduce over zero elements (no identity).
std::vector<TensorSpec> infer_extremum(const InferArgs& args);
/// Throws that ValueError for `shape` reduced over `axes`.
void check_reduction_nonempty(std::string_view op, const Shape& shape,
                              const std::vector<int>& axes);

/// The extremum fold: keeps the larger (kMax) or smaller value; a NaN wins and stays.
template <bool kMax>
inline constexpr auto kExtremumFold = [](auto acc, auto v) {
  const bool better = kMax ? v > acc : v < acc;
  return (better || v != v) ? v : acc;  // v != v: NaN
};
template <bool kMax, typename A>
A extremum_init() {
  if constexpr (std::numeric_limits<A>::has_infinity) {
    return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
  } else {
    return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
}

/// out[o, i] = index along the middle axis of the first largest (kMax) or smallest element of
/// in viewed as [outer, n, inner]; the first NaN when there is one.
template <bool kMax, typename T>
void arg_extremum_loop(const T* in, int64_t* out, int64_t outer, int64_t n, int64_t inner,
                       const RunContext& ctx) {
  parallel_for(outer * inner, ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const T* p = in + (r / inner) * n * inner + r % inner;
      int64_t best = 0;
      auto best_v = static_cast<Accum<T>>(p[0]);
      for (int64_t k = 1; k < n && best_v == best_v; ++k) {
        const auto v = static_cast<Accum<T>>(p[k * inner]);
        const bool better = kMax ? v > best_v : v < best_v;
        if (better || v != v) {
          best = k;
          best_v = v;
        }
      }
      out[r] = best;
    }
  });
}

/// Shape rule of argmax/argmin (attributes axis, keepdims): int64 output.
std::vector<TensorSpec> infer_arg_extremum(const InferArgs& args);
/// Kernel body of argmax/argmin.
template <bool kMax>
void arg_extremum_cpu(const KernelArgs& args) {
  const Shape& s = args.in(0).shape();
  const int axis = normalize_axes("arg", {ArgReduceAttrs::from(args.attrs).axis}, s.ndim())[0];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.ndim(); ++i) inner *= s[i];
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    arg_extremum_loop<kMax, T>(args.in(0).data<T>(), args.out(0).data<int64_t>(), outer, s[axis],
                               inner, args.ctx);
  });
}

}  // namespace janus::ops
