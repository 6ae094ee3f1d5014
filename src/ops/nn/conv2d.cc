// conv2d(x, weight, bias): 2-D convolution with stride, padding, dilation and groups (oneDNN).
#include "janus/ops/ops.h"

#include "../elementwise/relu_backward.h"
#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

// The geometry of a conv2d call, with its activation (none or relu).
ConvGeom conv2d_geometry(const Shape& x, const Shape& w, const Attrs& attrs) {
  const Conv2dAttrs a = Conv2dAttrs::from(attrs);
  ConvGeom g = conv_geometry("conv2d", x, w, a);
  g.relu = a.activation == Activation::kRelu;
  return g;
}

std::vector<TensorSpec> infer_conv2d(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& w = args.inputs[1];
  const TensorSpec& b = args.inputs[2];
  const ConvGeom g = conv2d_geometry(x.shape, w.shape, args.attrs);
  JANUS_CHECK(b.shape == Shape{g.o}, ShapeError,
              "conv2d: bias has shape {} for weight {}, expected [{}] (one per output channel)",
              b.shape, w.shape, g.o);
  check_conv_dtypes("conv2d", {x.dtype, w.dtype, b.dtype});
  return {TensorSpec{Shape{g.n, g.o, g.oh, g.ow}, x.dtype, x.device}};
}

void prepare_conv2d(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  prepare_conv_forward(conv2d_geometry(args.inputs[0].shape, args.inputs[1].shape, args.attrs));
}

void conv2d_cpu(const KernelArgs& args) {
  const ConvGeom g = conv2d_geometry(args.in(0).shape(), args.in(1).shape(), args.attrs);
  conv_forward(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
               args.in(2).raw_data(), args.out(0).raw_data(), args.ctx);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "conv2d",
    .doc = "2-D convolution (cross-correlation) of x [N, C, H, W] with weight [O, C / groups, KH, "
           "KW], plus bias [O]: y [N, O, OH, OW].\n\n"
           "OH = (H + 2 * padding - dilation * (KH - 1) - 1) / stride + 1, and likewise OW. "
           "float32 runs through oneDNN; without a bias, pass zeros of shape [O]. activation "
           "\"relu\" applies relu to y in the same call (the graph's fuse_bias_activation pass "
           "sets it), with relu's rule: NaN stays NaN, so the fused call and a separate relu "
           "give identical results.",
    .inputs = {"x", "weight", "bias"},
    .outputs = {"y"},
    .attrs = conv_attrs({{"activation", AttrType::kString, std::string(),
                          "'' or 'relu', applied to the result"}}),
    .attr_fields = attr_fields<Conv2dAttrs>(),
    .infer = infer_conv2d,
    .kernels = {{DeviceType::kCPU, conv2d_cpu}},
    .prepare = prepare_conv2d,
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const Conv2dAttrs a = Conv2dAttrs::from(g.attrs);
      const Shape& xs = g.x(0).shape();
      const Shape& ws = g.x(1).shape();
      // With relu, dy first passes where y > 0 (y > 0 exactly where the convolution was).
      const NDArray dy =
          a.activation == Activation::kRelu ? relu_backward(g.y(0), g.dy(0)) : g.dy(0);
      return {g.needs(0) ? conv2d_backward_data(dy, g.x(1), {xs[2], xs[3]}, a.stride, a.padding,
                                                a.dilation, a.groups)
                         : NDArray(),
              g.needs(1) ? conv2d_backward_weight(g.x(0), dy, {ws[2], ws[3]}, a.stride, a.padding,
                                                  a.dilation, a.groups)
                         : NDArray(),
              g.needs(2) ? invoke(get_op("conv2d_backward_bias"), {dy})[0] : NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray conv2d(const NDArray& x, const NDArray& weight, const NDArray& bias,
               std::vector<int64_t> stride, std::vector<int64_t> padding,
               std::vector<int64_t> dilation, int64_t groups) {
  static const ops::OpDef& op = ops::get_op("conv2d");
  return ops::invoke(op, {x, weight, bias},
                     {std::move(stride), std::move(padding), std::move(dilation), groups})[0];
}
}  // namespace janus
