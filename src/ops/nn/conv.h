// The geometry of a convolution over 1, 2 or 3 spatial axes and its three kernels (forward, data
// gradient, weight gradient), shared by the conv{1,2,3}d operators, their gradients and the
// transposed convolutions: oneDNN primitives cached by geometry for float32, direct loops for
// float64 and empty extents. Private to src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "janus/ops/registry.h"

#include "nn_attrs.h"

namespace janus::ops {

/// The most spatial axes a convolution has (3: depth, height, width).
inline constexpr int kMaxConvDims = 3;

/// x [n, c, in...] * weight [o, c / groups, k...] -> y [n, o, out...] with `dims` spatial axes.
/// The spatial arrays hold the `dims` axes right-aligned; the leading unused entries are the
/// neutral 1 (extent, kernel, stride, dilation) and 0 (padding), so that one loop over three
/// axes serves every rank with the same memory offsets.
struct ConvGeom {
  int dims = 2;
  int64_t n = 0, c = 0, o = 0;
  std::array<int64_t, kMaxConvDims> in{}, k{}, out{}, stride{}, pad{}, dil{};
  int64_t groups = 1;
  // Forward only: y = activation(conv + bias), the activation operator's function (post_op.h).
  Activation activation = Activation::kNone;
  // Forward only (2 spatial axes): y is then avg_pool2d(activation(conv + bias), 2x2 windows,
  // stride 2), each window summed as the pooling operator sums it (pool.h's avg_2x2).
  bool avg_pool_2x2 = false;
  auto operator<=>(const ConvGeom&) const = default;

  /// The product of the spatial extents of x, of y, and of the kernel.
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
  /// The multiply-adds of one pass (forward, backward data and backward weight each do these).
  int64_t macs() const { return n * o * out_size() * (c / groups) * k_size(); }
  /// The shapes of x, weight and y.
  Shape x_shape() const;
  Shape weight_shape() const;
  Shape y_shape() const;
  /// What the forward call returns: y_shape, or with avg_pool_2x2 its height and width halved
  /// (rounded down: an odd last row or column is in no window).
  Shape result_shape() const;
};

/// The name of the operator of `kind` ("conv{}d", "conv{}d_backward_data", ...) for `dims`
/// spatial axes; a string with static storage, as registered.
std::string_view conv_op_name(std::string_view kind, int dims);

/// The attributes every convolution operator with `dims` spatial axes starts with: stride,
/// padding, dilation, groups (defaults of `dims` values).
std::vector<AttrDef> conv_attrs(int dims, std::vector<AttrDef> extra = {});

/// Checks stride, padding, dilation and groups and the shapes of x [n, c, in...] and weight
/// [o, c / groups, k...] with `dims` spatial axes, and computes the output extent. Errors name
/// `op`.
ConvGeom conv_geometry(std::string_view op, int dims, const Shape& x, const Shape& weight,
                       const ConvAttrs& attrs);

/// `attr` of `dims` values from one (every axis) or `dims` values, each at least `min_value`.
/// Errors name `op` and `attr`.
std::vector<int64_t> spatial_attr(std::string_view op, std::string_view attr, int dims,
                                  const std::vector<int64_t>& v, int64_t min_value);

/// Checks that the dtypes are one floating type that the convolution supports.
void check_conv_dtypes(std::string_view op, std::initializer_list<DType> dtypes);

/// True when the kernels run through oneDNN (float32, no zero extent).
bool conv_uses_onednn(const ConvGeom& g, DType dtype);

/// Builds (once per geometry, on the caller's thread) the primitive of each pass; call from an
/// operator's `prepare`.
void prepare_conv_forward(const ConvGeom& g);
void prepare_conv_backward_data(const ConvGeom& g);
void prepare_conv_backward_weight(const ConvGeom& g);

/// y = g.activation(conv(x, weight) + bias) (post_op.h), pooled when g.avg_pool_2x2.
void conv_forward(const ConvGeom& g, DType dtype, const void* x, const void* weight,
                  const void* bias, void* y, const RunContext& ctx);
/// Whether conv_forward takes conv_single_channel for float32: 2 spatial axes, one input
/// channel, fewer than 16 output channels, stride and dilation 1 (conv_single_channel.cc).
bool conv_single_channel_applies(const ConvGeom& g);
/// Whether conv_backward_weight takes conv_single_channel_backward_weight for float32: where
/// conv_single_channel_applies, on a CPU with AVX-512F (the kernel's only instruction set).
bool conv_single_channel_backward_weight_applies(const ConvGeom& g);
/// y = g.activation(conv(x, weight) + bias) (NCHW), pooled when g.avg_pool_2x2, for a geometry
/// where conv_single_channel_applies; the activation and the pooling run on each image's outputs
/// while in cache.
void conv_single_channel(const ConvGeom& g, const float* x, const float* weight, const float* bias,
                         float* y, const RunContext& ctx);
/// dweight from x and dy (NCHW) where conv_single_channel_backward_weight_applies.
void conv_single_channel_backward_weight(const ConvGeom& g, const float* x, const float* dy,
                                         float* dweight, const RunContext& ctx);
/// Whether conv_backward_data takes conv_gemm_backward_data for float32: 2 spatial axes, fewer
/// than 16 input channels, one group, stride and dilation 1, on a CPU with AVX-512F.
bool conv_gemm_backward_data_applies(const ConvGeom& g);
/// Builds (once per geometry) conv_gemm_backward_data's matmul primitive.
void prepare_conv_gemm_backward_data(const ConvGeom& g);
/// dx from dy and weight (NCHW) where conv_gemm_backward_data_applies: a matmul into the taps'
/// columns, then each dx element summed from its taps (conv_gemm_backward_data.cc).
void conv_gemm_backward_data(const ConvGeom& g, const float* dy, const float* weight, float* dx,
                             const RunContext& ctx);
/// dx from dy and weight.
void conv_backward_data(const ConvGeom& g, DType dtype, const void* dy, const void* weight,
                        void* dx, const RunContext& ctx);
/// dweight from x and dy.
void conv_backward_weight(const ConvGeom& g, DType dtype, const void* x, const void* dy,
                          void* dweight, const RunContext& ctx);
/// x[n, c, ...] += bias[c] over the input side of g (the output of a transposed convolution).
void conv_add_input_bias(const ConvGeom& g, DType dtype, const void* bias, void* x);

/// The operators, for the gradient rules: conv{dims}d(x, weight, bias) and its gradients.
NDArray invoke_conv(int dims, const NDArray& x, const NDArray& weight, const NDArray& bias,
                    const ConvAttrs& a);
NDArray invoke_conv_backward_data(int dims, const NDArray& dy, const NDArray& weight,
                                  const std::vector<int64_t>& input_size, const ConvAttrs& a);
/// `out`: where dweight goes when defined (invoke_to), else a new array.
NDArray invoke_conv_backward_weight(int dims, const NDArray& x, const NDArray& dy,
                                    const std::vector<int64_t>& kernel_size, const ConvAttrs& a,
                                    NDArray out = {});
/// The spatial extents of a shape [n, c, spatial...].
std::vector<int64_t> spatial_extents(const Shape& s);

}  // namespace janus::ops
