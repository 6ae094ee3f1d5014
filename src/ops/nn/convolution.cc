// conv1d, conv2d, conv3d(x, weight, bias): convolution over 1, 2 or 3 spatial axes with stride,
// padding, dilation and groups (oneDNN). One definition, registered once per number of axes.
#include "janus/ops/ops.h"

#include "../invoke_one.h"
#include "../op_utils.h"
#include "conv.h"
#include "post_op.h"

namespace janus::ops {
namespace {

// The geometry of a call, with its activation; `dims` spatial axes.
ConvGeom geometry(int dims, const Shape& x, const Shape& w, const Attrs& attrs) {
  const ConvolutionAttrs a = ConvolutionAttrs::from(attrs);
  const std::string_view name = conv_op_name("forward", dims);
  ConvGeom g = conv_geometry(name, dims, x, w, a);
  g.activation = a.activation;
  g.avg_pool_2x2 = a.avg_pool_2x2;
  if (g.avg_pool_2x2) {
    JANUS_CHECK(dims == 2, ValueError,
                "{}: avg_pool_2x2 pools height and width, expected conv2d (2 spatial axes)", name);
    JANUS_CHECK(g.out[1] >= 2 && g.out[2] >= 2, ShapeError,
                "{}: avg_pool_2x2 needs a result of at least 2x2, got {}x{} (input {}, weight {})",
                name, g.out[1], g.out[2], x, w);
  }
  return g;
}

// The kernels take the number of axes from x, which infer has checked.
int dims_of(const Shape& x) { return x.ndim() - 2; }

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  const Shape& x = args.inputs[0].shape;
  prepare_conv_forward(geometry(dims_of(x), x, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const Shape& x = args.in(0).shape();
  const ConvGeom g = geometry(dims_of(x), x, args.in(1).shape(), args.attrs);
  conv_forward(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
               args.in(2).raw_data(), args.out(0).raw_data(), args.ctx);
}

constexpr std::array<std::string_view, 4> kDocs = {
    "",
    "1-D convolution (cross-correlation) of x [N, C, W] with weight [O, C / groups, KW], plus "
    "bias [O]: y [N, O, OW].\n\n"
    "OW = (W + 2 * padding - dilation * (KW - 1) - 1) / stride + 1. float32 runs through "
    "oneDNN; without a bias, pass zeros of shape [O]. activation \"relu\", \"sigmoid\" or "
    "\"tanh\" applies that operator's function to y in the same call, bit for bit.",
    "2-D convolution (cross-correlation) of x [N, C, H, W] with weight [O, C / groups, KH, KW], "
    "plus bias [O]: y [N, O, OH, OW].\n\n"
    "OH = (H + 2 * padding - dilation * (KH - 1) - 1) / stride + 1, and likewise OW. float32 "
    "runs through oneDNN; without a bias, pass zeros of shape [O]. activation \"relu\", "
    "\"sigmoid\" or \"tanh\" applies that operator's function to y in the same call (the "
    "graph's fuse_bias_activation pass sets it): the fused call and the separate operator give "
    "identical results, NaN included. avg_pool_2x2 then averages each 2x2 window with stride 2 "
    "in the same call, y [N, O, OH / 2, OW / 2] (the fuse_conv_avg_pool pass sets it), bit for "
    "bit avg_pool2d(y, 2, 2).",
    "3-D convolution (cross-correlation) of x [N, C, D, H, W] with weight [O, C / groups, KD, KH, "
    "KW], plus bias [O]: y [N, O, OD, OH, OW].\n\n"
    "OD = (D + 2 * padding - dilation * (KD - 1) - 1) / stride + 1, and likewise OH and OW. "
    "float32 runs through oneDNN; without a bias, pass zeros of shape [O]. activation \"relu\", "
    "\"sigmoid\" or \"tanh\" applies that operator's function to y in the same call, bit for "
    "bit."};

OpDef definition(int dims) {
  const std::string_view name = conv_op_name("forward", dims);
  return {
      .name = name,
      .doc = kDocs[static_cast<size_t>(dims)],
      .inputs = {"x", "weight", "bias"},
      .outputs = {"y"},
      .attrs = conv_attrs(dims, {{"activation", AttrType::kString, std::string(),
                                  "'', 'relu', 'sigmoid' or 'tanh', applied to the result"},
                                 {"avg_pool_2x2", AttrType::kBool, false,
                                  "conv2d only: average the (activated) result over 2x2 "
                                  "windows with stride 2, as avg_pool2d(y, 2, 2)"}}),
      .attr_fields = attr_fields<ConvolutionAttrs>(),
      .infer = [dims, name](const InferArgs& args) -> std::vector<TensorSpec> {
        const TensorSpec& x = args.inputs[0];
        const TensorSpec& w = args.inputs[1];
        const TensorSpec& b = args.inputs[2];
        const ConvGeom g = geometry(dims, x.shape, w.shape, args.attrs);
        JANUS_CHECK(b.shape == Shape{g.o}, ShapeError,
                    "{}: bias has shape {} for weight {}, expected [{}] (one per output channel)",
                    name, b.shape, w.shape, g.o);
        check_conv_dtypes(name, {x.dtype, w.dtype, b.dtype});
        return {TensorSpec{g.result_shape(), x.dtype, x.device}};
      },
      .kernels = {{DeviceType::kCPU, kernel}},
      .prepare = prepare,
      .grad = [dims, name](const GradArgs& g) -> std::vector<NDArray> {
        static const OpDef& bias_op = get_op("conv2d_backward_bias");
        const ConvolutionAttrs a = ConvolutionAttrs::from(g.attrs);
        // dy first goes back through the pooling, then through the activation from its output
        // (recomputed when pooled: the call returned the pooled values only). The weight's and
        // the bias's gradients go into their buffers when backward gives them.
        NDArray y = g.y(0), dy_act = g.dy(0);
        if (a.avg_pool_2x2) {
          y = invoke(get_op(name), {g.x(0), g.x(1), g.x(2)},
                     {a.stride, a.padding, a.dilation, a.groups,
                      std::string(activation_name(a.activation))})[0];
          dy_act = avg_pool2d_backward(dy_act, spatial_extents(y.shape()), {2, 2}, {2, 2});
        }
        const NDArray dy = post_op_backward(a.activation, y, dy_act);
        return {
            g.needs(0)
                ? invoke_conv_backward_data(dims, dy, g.x(1), spatial_extents(g.x(0).shape()), a)
                : NDArray(),
            g.needs(1) ? invoke_conv_backward_weight(
                             dims, g.x(0), dy, spatial_extents(g.x(1).shape()), a, g.grad_buffer(1))
                       : NDArray(),
            g.needs(2) ? invoke_one_to(bias_op, {dy}, {}, g.grad_buffer(2)) : NDArray()};
      },
  };
}

const OpRegistrar conv1d_registrar(definition(1));
const OpRegistrar conv2d_registrar(definition(2));
const OpRegistrar conv3d_registrar(definition(3));

}  // namespace
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
