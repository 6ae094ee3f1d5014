// The geometry of a 2-D convolution and its three kernels (forward, data gradient, weight
// gradient), shared by conv2d, conv2d_backward_data and conv2d_backward_weight: oneDNN
// primitives cached by geometry for float32, direct loops for float64 and empty extents.
// Private to src/ops.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "janus/ops/registry.h"

#include "nn_attrs.h"

namespace janus::ops {

/// x [n, c, h, w] * weight [o, c / groups, kh, kw] -> y [n, o, oh, ow].
struct ConvGeom {
  int64_t n, c, h, w;
  int64_t o, kh, kw;
  int64_t oh, ow;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  int64_t groups;
  bool relu = false;  // forward only: y = relu(conv + bias), relu's rule (relu_rule.h)
  auto operator<=>(const ConvGeom&) const = default;
};

/// The attributes every convolution operator starts with: stride, padding, dilation, groups.
std::vector<AttrDef> conv_attrs(std::vector<AttrDef> extra = {});

/// Checks stride, padding, dilation and groups and the shapes of x [n, c, h, w] and weight
/// [o, c / groups, kh, kw], and computes the output extent. Errors name `op`.
ConvGeom conv_geometry(std::string_view op, const Shape& x, const Shape& weight,
                       const ConvAttrs& attrs);

/// Checks that the dtypes are one floating type that the convolution supports.
void check_conv_dtypes(std::string_view op, std::initializer_list<DType> dtypes);

/// True when the kernels run through oneDNN (float32, no zero extent).
bool conv_uses_onednn(const ConvGeom& g, DType dtype);

/// Builds (once per geometry, on the caller's thread) the primitive of each pass; call from an
/// operator's `prepare`.
void prepare_conv_forward(const ConvGeom& g);
void prepare_conv_backward_data(const ConvGeom& g);
void prepare_conv_backward_weight(const ConvGeom& g);

/// y = conv(x, weight) + bias, then relu (NaN stays NaN, relu_rule.h) when g.relu.
void conv_forward(const ConvGeom& g, DType dtype, const void* x, const void* weight,
                  const void* bias, void* y, const RunContext& ctx);
/// dx from dy and weight.
void conv_backward_data(const ConvGeom& g, DType dtype, const void* dy, const void* weight,
                        void* dx);
/// dweight from x and dy.
void conv_backward_weight(const ConvGeom& g, DType dtype, const void* x, const void* dy,
                          void* dweight);

}  // namespace janus::ops
