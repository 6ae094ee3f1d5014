// Reductions over any set of axes of a contiguous array. Private to src/ops.
#pragma once

#include <algorithm>
#include <vector>

#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "reduction_attrs.h"

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
/// odometer over `reduce_extents`/`reduce_strides`, kept axes by `keep_*`. `inner` is the
/// number of elements of the kept axes after the last reduced axis (1 when the last axis is
/// reduced): those outputs read contiguous rows, and are folded a row at a time.
struct ReducePlan {
  int64_t out_size = 1;
  int64_t reduce_size = 1;
  int64_t inner = 1;
  int inner_axes = 0;  // how many kept axes `inner` spans (the last ones)
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

namespace detail {

/// Offset in the input of the first element of output `o` over kept axes [0, nk).
inline int64_t kept_offset(const ReducePlan& p, int nk, int64_t o) {
  int64_t base = 0;
  for (int d = nk - 1; d >= 0; --d) {
    const size_t ud = static_cast<size_t>(d);
    base += (o % p.keep_extents[ud]) * p.keep_strides[ud];
    o /= p.keep_extents[ud];
  }
  return base;
}

/// Steps the odometer over reduced axes [0, axes): the offset of the next reduced element.
inline void step_reduced(const ReducePlan& p, int axes, std::vector<int64_t>& ridx, int64_t& off) {
  for (int d = axes - 1; d >= 0; --d) {
    const size_t ud = static_cast<size_t>(d);
    off += p.reduce_strides[ud];
    if (++ridx[ud] < p.reduce_extents[ud]) return;
    off -= p.reduce_strides[ud] * p.reduce_extents[ud];
    ridx[ud] = 0;
  }
}

}  // namespace detail

/// out[o] = finish(fold over the reduced elements of block o, reduce_size). Every output folds
/// its elements in the same order (row-major over the reduced axes) whichever path runs, so
/// results do not depend on the layout of the work.
template <typename T, typename A, typename Fold, typename Finish>
void reduce_loop(const T* in, T* out, const ReducePlan& p, A init, Fold fold, Finish finish,
                 const RunContext& ctx) {
  const int nk = static_cast<int>(p.keep_extents.size());
  const int nr = static_cast<int>(p.reduce_extents.size());
  if (p.inner > 1 && nr > 0) {
    // The last axes are kept: a strip of `strip` neighbouring outputs reads one contiguous row
    // per reduced element, so the strip's accumulators advance together (vectorised, one pass
    // over memory) instead of each output striding through the input alone. The row's fold is
    // compiled per instruction set (simd_loop.h); each accumulator still folds in row order.
    // A strip is as wide as one thread's share of a row, 256 to 2048 outputs (its double
    // accumulators stay in L1): the rows' pieces it reads are then long runs that the hardware
    // prefetches, where narrow strips of a wide row restart a stream every row.
    const int64_t threads = std::max(ctx.num_threads, 1);
    const int64_t share = (p.inner + threads - 1) / threads;
    const int64_t strip = std::clamp<int64_t>((share + 15) / 16 * 16, 256, 2048);
    const int nk_outer = nk - p.inner_axes;  // the kept axes after the last reduced one merge
    const int64_t strips = (p.inner + strip - 1) / strip;
    const int64_t outer = p.out_size / p.inner;
    parallel_for(
        outer * strips, ctx,
        [&](int64_t lo, int64_t hi) {
          std::vector<int64_t> ridx(static_cast<size_t>(nr));
          std::vector<A> acc(static_cast<size_t>(strip), init);
          for (int64_t task = lo; task < hi; ++task) {
            const int64_t o = task / strips, j0 = (task % strips) * strip;
            const int64_t len = std::min(strip, p.inner - j0);
            const T* src = in + detail::kept_offset(p, nk_outer, o) + j0;
            std::fill(acc.begin(), acc.end(), init);
            std::fill(ridx.begin(), ridx.end(), 0);
            int64_t off = 0;
            for (int64_t r = 0; r < p.reduce_size; ++r) {
              simd::fold_row(acc.data(), src + off, len, fold);
              detail::step_reduced(p, nr, ridx, off);
            }
            T* dst = out + o * p.inner + j0;
            for (int64_t j = 0; j < len; ++j) {
              dst[j] = from_double<T>(
                  static_cast<double>(finish(acc[static_cast<size_t>(j)], p.reduce_size)));
            }
          }
        },
        /*item_cost=*/std::max<int64_t>(p.reduce_size, 1) * std::min(strip, p.inner));
    return;
  }
  // The innermost reduced axis, when contiguous, is folded as one run (same order as element
  // by element); the odometer then steps the outer reduced axes only.
  const bool contiguous_run = nr > 0 && p.reduce_strides[static_cast<size_t>(nr - 1)] == 1;
  const int64_t run = contiguous_run ? p.reduce_extents[static_cast<size_t>(nr - 1)] : 1;
  const int outer_axes = contiguous_run ? nr - 1 : nr;
  parallel_for(
      p.out_size, ctx,
      [&](int64_t lo, int64_t hi) {
        std::vector<int64_t> ridx(static_cast<size_t>(nr));
        for (int64_t o = lo; o < hi; ++o) {
          const T* src = in + detail::kept_offset(p, nk, o);
          A acc = init;
          std::fill(ridx.begin(), ridx.end(), 0);
          int64_t off = 0;
          for (int64_t r = 0; r < p.reduce_size; r += run) {
            const T* block = src + off;
            for (int64_t i = 0; i < run; ++i) acc = fold(acc, static_cast<A>(block[i]));
            detail::step_reduced(p, outer_axes, ridx, off);
          }
          out[o] = from_double<T>(static_cast<double>(finish(acc, p.reduce_size)));
        }
      },
      /*item_cost=*/std::max<int64_t>(p.reduce_size, 1));
}

}  // namespace janus::ops
