// Axis normalisation and strided copies shared by the shape operators. Private to src/ops.
#pragma once

#include <cstring>
#include <string_view>
#include <vector>

#include "../op_utils.h"

namespace janus::ops {

/// `axis` counted from the end when negative; throws IndexError naming `op` unless it lies in
/// [-ndim, ndim).
inline int normalize_axis(std::string_view op, int64_t axis, int ndim) {
  JANUS_CHECK(axis >= -ndim && axis < ndim, IndexError,
              "{}: axis {} is out of range for an array of {} dimensions, expected in [{}, {})", op,
              axis, ndim, -ndim, ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

/// Row-major strides (in elements) of a contiguous array of `shape`.
inline std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.ndim()));
  int64_t stride = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= shape[i];
  }
  return strides;
}

/// Product of the extents of `shape` in [begin, end).
inline int64_t extent_product(const Shape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape[i];
  return n;
}

/// out (contiguous, `out_shape`) [j...] = in[offset + sum_d j_d * in_strides[d]]: transposes,
/// broadcasts (stride 0) and strided slices are all this loop.
template <typename T>
void gather_strided(const T* in, int64_t offset, const std::vector<int64_t>& in_strides, T* out,
                    const Shape& out_shape, const RunContext& ctx) {
  const int nd = out_shape.ndim();
  const int64_t n = out_shape.numel();
  if (n == 0) return;
  if (nd == 0) {
    out[0] = in[offset];
    return;
  }
  const int64_t inner = out_shape[nd - 1];
  const int64_t inner_stride = in_strides[static_cast<size_t>(nd - 1)];
  parallel_for(n / inner, ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t rem = r, src = offset;
      for (int d = nd - 2; d >= 0; --d) {
        src += (rem % out_shape[d]) * in_strides[static_cast<size_t>(d)];
        rem /= out_shape[d];
      }
      T* dst = out + r * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = in[src + i * inner_stride];
    }
  });
}

/// A slice bound in [-extent, extent] counted from the end when negative; throws IndexError
/// naming `op`, the bound and the axis otherwise.
inline int64_t normalize_bound(std::string_view op, std::string_view what, int64_t value,
                               int64_t extent, int axis) {
  JANUS_CHECK(value >= -extent && value <= extent, IndexError,
              "{}: {} {} is out of range for axis {} of extent {}, expected in [{}, {}]", op, what,
              value, axis, extent, -extent, extent);
  return value < 0 ? value + extent : value;
}

/// out = for each of `outer` rows, `a_block` elements of input 0 then `b_block` of input 1: the
/// kernel of concat and stack (defined in concat.cc).
void join_rows(const KernelArgs& args, int64_t outer, int64_t a_block, int64_t b_block);

/// Throws TypeError naming `op` unless `dtype` is int32 or int64 (index arrays).
inline void check_index_dtype(std::string_view op, std::string_view input, DType dtype) {
  JANUS_CHECK(dtype == DType::kInt32 || dtype == DType::kInt64, TypeError,
              "{}: {} has dtype {}, expected int32 or int64", op, input, dtype);
}

/// The values of an int32/int64 index array, counted from the end when negative; throws
/// IndexError naming `op` for one outside [-extent, extent).
inline std::vector<int64_t> read_indices(std::string_view op, const NDArray& index,
                                         int64_t extent) {
  std::vector<int64_t> out(static_cast<size_t>(index.size()));
  auto read = [&]<typename I>(const I* p) {
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t v = static_cast<int64_t>(p[k]);
      JANUS_CHECK(v >= -extent && v < extent, IndexError,
                  "{}: index {} at position {} is out of range for an axis of extent {}, expected "
                  "in [{}, {})",
                  op, v, k, extent, -extent, extent);
      out[k] = v < 0 ? v + extent : v;
    }
  };
  if (index.dtype() == DType::kInt32) {
    read(index.data<int32_t>());
  } else {
    read(index.data<int64_t>());
  }
  return out;
}

/// Copies every element of a contiguous array (a reshape-like operator's kernel).
inline void copy_all(const KernelArgs& args) {
  // In place (a planned graph may give the output the input's buffer): nothing to move.
  if (args.in(0).nbytes() == 0 || args.out(0).raw_data() == args.in(0).raw_data()) return;
  std::memcpy(args.out(0).raw_data(), args.in(0).raw_data(), args.in(0).nbytes());
}

}  // namespace janus::ops
