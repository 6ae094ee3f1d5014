// The geometry of 2-D pooling windows and the loops of max and average pooling, shared by
// max_pool2d, avg_pool2d and their backward operators. Private to src/ops.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "janus/ops/registry.h"

#include "nn_attrs.h"

namespace janus::ops {

/// Windows of kh x kw with the given stride and (implicit) padding over x [n, c, h, w].
struct PoolGeom {
  int64_t n, c, h, w;
  int64_t kh, kw, stride_h, stride_w, pad_h, pad_w;
  int64_t oh, ow;
};

/// kernel_size, stride (empty: the kernel size) and padding: attributes 0-2.
std::vector<AttrDef> pool_attrs(std::vector<AttrDef> extra = {});

/// Checks kernel_size, stride and padding against x [n, c, h, w] and computes the output
/// extent. Errors name `op`.
PoolGeom pool_geometry(std::string_view op, const Shape& x, const PoolAttrs& attrs);

/// Checks that `dtype` is float32 or float64.
void check_pool_dtype(std::string_view op, DType dtype);

/// The checks of a max pooling gradient's inputs (x [n, c, h, w], dy the pooled shape, one
/// floating dtype), errors naming `op`; returns the geometry.
PoolGeom check_max_pool_backward(std::string_view op, const InferArgs& args);

/// y[n, c, oy, ox] = max over the window (padding never wins).
void max_pool_forward(const PoolGeom& g, const NDArray& x, const NDArray& y, const RunContext& ctx);
/// dx: each window's dy goes to the first position holding the window's maximum.
void max_pool_backward(const PoolGeom& g, const NDArray& x, const NDArray& dy, const NDArray& dx,
                       const RunContext& ctx);
/// max_pool_backward, then relu's gradient with x as relu's output: dx = relu_backward(x,
/// max_pool_backward's dx), the bits of the two; and plane_sums[p] = plane_sum of dx's plane p
/// (n * c of them, plane_sum.h's order), for a convolution's bias gradient.
void max_pool_relu_backward(const PoolGeom& g, const NDArray& x, const NDArray& dy,
                            const NDArray& dx, double* plane_sums, const RunContext& ctx);
/// y = mean over the window; the divisor counts the padding when `count_pad`.
void avg_pool_forward(const PoolGeom& g, bool count_pad, const NDArray& x, const NDArray& y,
                      const RunContext& ctx);
/// The mean of one 2x2 window with taps a, b (first row) and c, d: the taps added from 0 in that
/// order, then divided, as every average pooling loop sums a window (the same bits everywhere,
/// NaN, infinities and -0 included).
template <typename T>
inline T avg_2x2(T a, T b, T c, T d) {
  return ((((T(0) + a) + b) + c) + d) / T(4);
}
/// out[oy * ow + ox] = avg_2x2 of the window at (2 oy, 2 ox) of a plane whose rows are
/// `row_stride` apart, for oy < oh, ox < ow: avg_pool2d's 2x2 stride-2 windows, and a fused
/// convolution's pooling of its own output.
template <typename T>
void avg_pool_2x2_rows(const T* in, int64_t row_stride, T* out, int64_t oh, int64_t ow);
/// The same windows of an image in channels-last layout, in [h, w, c], into out [c, oh, ow]
/// (channels first): oneDNN's convolution output pooled without converting it first.
void avg_pool_2x2_channels_last(const float* in, int64_t w, int64_t c, float* out, int64_t oh,
                                int64_t ow);
/// dx: each window's dy spread evenly over the positions it averaged.
void avg_pool_backward(const PoolGeom& g, bool count_pad, const NDArray& dy, const NDArray& dx,
                       const RunContext& ctx);

}  // namespace janus::ops
