// conv2d_backward_data(dy, weight): the gradient of conv2d with respect to its input.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "conv2d_backward_data";

// The forward geometry: x is [dy's batch, weight's channels x groups, input_size].
ConvGeom geometry(const Shape& dy, const Shape& w, const Attrs& attrs) {
  const Conv2dBackwardDataAttrs a = Conv2dBackwardDataAttrs::from(attrs);
  const std::vector<int64_t>& size = a.input_size;
  JANUS_CHECK(size.size() == 2 && size[0] >= 0 && size[1] >= 0, ValueError,
              "{}: input_size is [{}], expected 2 non-negative values (height, width)", kName,
              fmt::join(size, ", "));
  JANUS_CHECK(dy.ndim() == 4, ShapeError,
              "{}: dy has shape {}, expected 4 dimensions [batch, out_channels, height, width]",
              kName, dy);
  JANUS_CHECK(w.ndim() == 4, ShapeError, "{}: weight has shape {}, expected 4 dimensions", kName,
              w);
  const Shape x{dy[0], w[1] * a.groups, size[0], size[1]};
  const ConvGeom g = conv_geometry(kName, x, w, a);
  JANUS_CHECK(dy == (Shape{g.n, g.o, g.oh, g.ow}), ShapeError,
              "{}: dy has shape {}, but input {} convolved with weight {} gives {}", kName, dy, x,
              w, Shape{g.n, g.o, g.oh, g.ow});
  return g;
}

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& dy = args.inputs[0];
  const ConvGeom g = geometry(dy.shape, args.inputs[1].shape, args.attrs);
  check_conv_dtypes(kName, {dy.dtype, args.inputs[1].dtype});
  return {TensorSpec{Shape{g.n, g.c, g.h, g.w}, dy.dtype, dy.device}};
}

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  prepare_conv_backward_data(geometry(args.inputs[0].shape, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const ConvGeom g = geometry(args.in(0).shape(), args.in(1).shape(), args.attrs);
  conv_backward_data(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
                     args.out(0).raw_data());
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "conv2d_backward_data",
    .doc = "The input gradient dx [N, C, H, W] of conv2d from dy [N, O, OH, OW] and weight (a "
           "transposed convolution); input_size gives H and W.",
    .inputs = {"dy", "weight"},
    .outputs = {"dx"},
    .attrs = conv_attrs({{"input_size", AttrType::kInts, std::nullopt,
                          "H and W of the forward input"}}),
    .attr_fields = attr_fields<Conv2dBackwardDataAttrs>(),
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    .prepare = prepare,
    // dx is linear in dy and in weight: <g, dx> = <conv2d(g, weight), dy>.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const Conv2dBackwardDataAttrs a = Conv2dBackwardDataAttrs::from(g.attrs);
      const Shape& ws = g.x(1).shape();
      const NDArray no_bias = zeros(Shape{ws[0]}, g.x(1).dtype(), g.x(1).device());
      return {conv2d(g.dy(0), g.x(1), no_bias, a.stride, a.padding, a.dilation, a.groups),
              conv2d_backward_weight(g.dy(0), g.x(0), {ws[2], ws[3]}, a.stride, a.padding,
                                     a.dilation, a.groups)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray conv2d_backward_data(const NDArray& dy, const NDArray& weight,
                             std::vector<int64_t> input_size, std::vector<int64_t> stride,
                             std::vector<int64_t> padding, std::vector<int64_t> dilation,
                             int64_t groups) {
  static const ops::OpDef& op = ops::get_op("conv2d_backward_data");
  return ops::invoke(op, {dy, weight},
                     {std::move(stride), std::move(padding), std::move(dilation), groups,
                      std::move(input_size)})[0];
}
}  // namespace janus
