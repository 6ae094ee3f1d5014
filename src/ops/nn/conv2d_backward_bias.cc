// conv2d_backward_bias(dy): the gradient of a convolution (1 to 3 spatial axes, or its
// transpose) with respect to its bias, dy summed over the batch and the spatial axes.
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "../op_utils.h"
#include "plane_sum.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "conv2d_backward_bias";

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& dy = args.inputs[0];
  JANUS_CHECK(dy.shape.ndim() >= 3 && dy.shape.ndim() <= 5, ShapeError,
              "{}: dy has shape {}, expected 3 to 5 dimensions [batch, out_channels, 1 to 3 "
              "spatial axes]",
              kName, dy.shape);
  JANUS_CHECK(dy.dtype == DType::kFloat32 || dy.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", kName, dy.dtype);
  return {TensorSpec{Shape{dy.shape[1]}, dy.dtype, dy.device}};
}

// Channel by channel (in parallel), the planes of every sample in batch order; each channel's
// sum rounds once, to T, at the end.
template <typename T>
void bias_gradient(const T* dy, T* db, int64_t n, int64_t c, int64_t plane, const RunContext& ctx) {
  parallel_for(
      c, ctx,
      [&](int64_t lo, int64_t hi) {
        for (int64_t ch = lo; ch < hi; ++ch) {
          double total = 0;
          for (int64_t s = 0; s < n; ++s) total += plane_sum(dy + (s * c + ch) * plane, plane);
          db[ch] = static_cast<T>(total);
        }
      },
      /*item_cost=*/n * plane);
}

void kernel(const KernelArgs& args) {
  const NDArray& dy = args.in(0);
  const Shape& s = dy.shape();
  int64_t plane = 1;
  for (int i = 2; i < s.ndim(); ++i) plane *= s[i];
  if (dy.dtype() == DType::kFloat64) {
    bias_gradient(dy.data<double>(), args.out(0).data<double>(), s[0], s[1], plane, args.ctx);
  } else {
    bias_gradient(dy.data<float>(), args.out(0).data<float>(), s[0], s[1], plane, args.ctx);
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "conv2d_backward_bias",
    .doc = "The bias gradient dbias [O] of a convolution (conv1d, conv2d, conv3d or a "
           "transpose) from dy [N, O, spatial...]: dy summed over the batch and the spatial axes "
           "(in float64, rounded once).",
    .inputs = {"dy"},
    .outputs = {"dbias"},
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    // Linear in dy: each dy element receives its channel's gradient.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const Shape& s = g.x(0).shape();
      std::vector<int64_t> per_channel(static_cast<size_t>(s.ndim()), 1);
      per_channel[1] = s[1];
      return {broadcast_to(reshape(g.dy(0), Shape(std::move(per_channel))), s)};
    },
});

}  // namespace janus::ops
