// What sort, argsort and topk share: the order of one row (the elements along one axis) and the
// loop over rows. Private to src/ops.
//
// The order is NumPy's: ascending by value, NaN after every number, equal values (and NaNs) by
// position, so the result is that of a stable sort. Descending reverses the comparison of
// values only: NaN first (as the largest), equal values still by position.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <vector>

#include "janus/ops/registry.h"

#include "../op_utils.h"
#include "../shape/layout.h"

namespace janus::ops {

/// The axis of an ordering over an array of `shape`, split as outer x n x inner.
struct RowLayout {
  int axis = 0;
  int64_t outer = 1, n = 1, inner = 1;

  static RowLayout of(std::string_view op, const Shape& shape, int64_t axis) {
    JANUS_CHECK(shape.ndim() >= 1, ShapeError,
                "{}: the array has 0 dimensions, expected at least 1 (reshape a scalar to (1,))",
                op);
    RowLayout r;
    r.axis = normalize_axis(op, axis, shape.ndim());
    r.outer = extent_product(shape, 0, r.axis);
    r.n = shape[r.axis];
    r.inner = extent_product(shape, r.axis + 1, shape.ndim());
    return r;
  }
  int64_t rows() const { return outer * inner; }
  /// Offset of element j of row r (rows numbered outer-major).
  int64_t at(int64_t r, int64_t j) const { return ((r / inner) * n + j) * inner + r % inner; }
};

/// The comparison key of a T: float for the 16-bit floating types, uint8_t for bool (a
/// std::vector<bool> has no data()), T itself otherwise.
template <typename T>
using OrderKey = std::conditional_t<std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>,
                                    float, std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

/// Fills `idx` (size k <= n) with the positions of the first k elements of the row of `x`
/// (n values, `stride` apart) in the order above. `keys` and `perm` are scratch of the thread.
template <typename T>
void order_row(const T* x, int64_t stride, int64_t n, int64_t k, bool descending,
               std::vector<OrderKey<T>>& keys, std::vector<int64_t>& perm, int64_t* idx) {
  using K = OrderKey<T>;
  keys.resize(static_cast<size_t>(n));
  perm.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) keys[static_cast<size_t>(j)] = static_cast<K>(x[j * stride]);
  std::iota(perm.begin(), perm.end(), int64_t{0});
  const K* v = keys.data();
  auto before = [v, descending](int64_t a, int64_t b) {
    const K va = v[a], vb = v[b];
    if constexpr (std::is_floating_point_v<K>) {
      const bool na = std::isnan(va), nb = std::isnan(vb);
      if (na || nb) {
        if (na && nb) return a < b;
        return descending ? na : nb;  // NaN is the largest value
      }
    }
    if (va != vb) return descending ? vb < va : va < vb;
    return a < b;  // a total order: ties by position, as a stable sort
  };
  if (k < n) {
    std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), before);
  } else {
    std::sort(perm.begin(), perm.end(), before);
  }
  std::copy(perm.begin(), perm.begin() + k, idx);
}

/// Calls emit(r, idx) for every row r of `x` with the positions of its first k elements in
/// order, rows split among the kernel's threads.
template <typename T, typename Emit>
void for_each_ordered_row(const T* x, const RowLayout& L, int64_t k, bool descending,
                          const RunContext& ctx, Emit emit) {
  parallel_for(
      L.rows(), ctx,
      [&](int64_t lo, int64_t hi) {
        std::vector<OrderKey<T>> keys;
        std::vector<int64_t> perm, idx(static_cast<size_t>(k));
        for (int64_t r = lo; r < hi; ++r) {
          order_row(x + L.at(r, 0), L.inner, L.n, k, descending, keys, perm, idx.data());
          emit(r, idx.data());
        }
      },
      L.n * 16);  // about n log n comparisons a row
}

/// Index dtypes of argsort and topk: integers, or MXNet's legacy floating indices.
inline void check_order_index_dtype(std::string_view op, DType dtype, int64_t n) {
  JANUS_CHECK(dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kFloat32 ||
                  dtype == DType::kFloat64,
              TypeError,
              "{}: dtype {} is not an index type, expected int32, int64, float32 or "
              "float64",
              op, dtype);
  // Every position below n must be exact in the index type.
  const int64_t limit = dtype == DType::kInt32     ? (int64_t{1} << 31)
                        : dtype == DType::kFloat32 ? (int64_t{1} << 24)
                                                   : (int64_t{1} << 53);
  JANUS_CHECK(n <= limit, ValueError,
              "{}: the axis has {} elements, more than dtype {} holds exactly (expected at most "
              "{})",
              op, n, dtype, limit);
}

/// Throws IndexError naming `op` unless each of the `count` positions is an integer in
/// [-n, n) (negative from the end). Kernels call it before their parallel loop: an exception
/// must not leave an OpenMP region.
template <typename I>
void check_positions(std::string_view op, const I* idx, int64_t count, int64_t n) {
  for (int64_t e = 0; e < count; ++e) {
    const double v = static_cast<double>(idx[e]);
    JANUS_CHECK(v >= static_cast<double>(-n) && v < static_cast<double>(n) && v == std::floor(v),
                IndexError,
                "{}: index {} at position {} is not a position of an axis of extent {}, expected "
                "an integer in [{}, {})",
                op, v, e, n, -n, n);
  }
}

/// A position checked by check_positions, counted from the start.
template <typename I>
int64_t wrap_position(I value, int64_t n) {
  const auto p = static_cast<int64_t>(value);
  return p < 0 ? p + n : p;
}

/// Calls f.template operator()<I>() for index dtype `dtype` (checked by check_order_index_dtype).
template <typename F>
void dispatch_index_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32:
      return f.template operator()<int32_t>();
    case DType::kInt64:
      return f.template operator()<int64_t>();
    case DType::kFloat32:
      return f.template operator()<float>();
    case DType::kFloat64:
      return f.template operator()<double>();
    default:
      JANUS_ASSERT(false, "ordering: index dtype {} was not checked", dtype);
  }
}

}  // namespace janus::ops
