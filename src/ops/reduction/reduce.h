// Reductions over any set of axes of a contiguous array. Private to src/ops.
#pragma once

#include <vector>

#include "../op_utils.h"

namespace janus::ops {

/// Axes normalised (negative counted from the end), sorted, unique; all axes when empty.
/// Throws IndexError naming `op`, the axis and the rank when one is out of range.
std::vector<int> normalize_axes(std::string_view op, const std::vector<int64_t>& axes, int ndim);

/// The shape after reducing `axes` of `shape` (extent 1 kept when keepdims).
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims,
                    std::string_view op = "reduce");

/// Shape rule of reductions whose attributes are (axes, keepdims): same dtype.
std::vector<TensorSpec> infer_reduce(const InferArgs& args);

/// The input viewed as [outer, reduced, inner] blocks: reduced axes are gathered by an
/// odometer over `reduce_extents`/`reduce_strides`, kept axes by `keep_*`.
struct ReducePlan {
  int64_t out_size = 1;
  int64_t reduce_size = 1;
  std::vector<int64_t> keep_extents, keep_strides;      // kept axes, outermost first
  std::vector<int64_t> reduce_extents, reduce_strides;  // reduced axes, outermost first
};
ReducePlan plan_reduce(const Shape& shape, const std::vector<int64_t>& axes);

/// The accumulator type of T: double for floating types, int64 for integers.
template <typename T>
using Accum = std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                                     std::is_same_v<T, bfloat16>,
                                 double, int64_t>;
template <typename T>
Accum<T> accum_zero() {
  return Accum<T>(0);
}

/// out[o] = finish(fold over the reduced elements of block o, reduce_size).
template <typename T, typename A, typename Fold, typename Finish>
void reduce_loop(const T* in, T* out, const ReducePlan& p, A init, Fold fold, Finish finish,
                 const RunContext& ctx) {
  const int nk = static_cast<int>(p.keep_extents.size());
  const int nr = static_cast<int>(p.reduce_extents.size());
  parallel_for(p.out_size, ctx, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> ridx(static_cast<size_t>(nr));
    for (int64_t o = lo; o < hi; ++o) {
      int64_t base = 0, rem = o;
      for (int d = nk - 1; d >= 0; --d) {
        base += (rem % p.keep_extents[static_cast<size_t>(d)]) * p.keep_strides[static_cast<size_t>(d)];
        rem /= p.keep_extents[static_cast<size_t>(d)];
      }
      A acc = init;
      std::fill(ridx.begin(), ridx.end(), 0);
      int64_t off = 0;
      // The innermost reduced axis, when contiguous, is folded as one run (same order as
      // element by element); the odometer then steps the outer reduced axes only.
      const bool contiguous_run = nr > 0 && p.reduce_strides[static_cast<size_t>(nr - 1)] == 1;
      const int64_t run = contiguous_run ? p.reduce_extents[static_cast<size_t>(nr - 1)] : 1;
      const int outer_axes = contiguous_run ? nr - 1 : nr;
      for (int64_t r = 0; r < p.reduce_size; r += run) {
        const T* block = in + base + off;
        for (int64_t i = 0; i < run; ++i) acc = fold(acc, static_cast<A>(block[i]));
        for (int d = outer_axes - 1; d >= 0; --d) {  // odometer over the reduced axes
          const size_t ud = static_cast<size_t>(d);
          off += p.reduce_strides[ud];
          if (++ridx[ud] < p.reduce_extents[ud]) break;
          off -= p.reduce_strides[ud] * p.reduce_extents[ud];
          ridx[ud] = 0;
        }
      }
      out[o] = from_double<T>(static_cast<double>(finish(acc, p.reduce_size)));
    }
  });
}

}  // namespace janus::ops
