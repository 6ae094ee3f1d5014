// conv2d_backward_weight(x, dy): the gradient of conv2d with respect to its weight.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "conv2d_backward_weight";

// The forward geometry: weight is [dy's channels, x's channels / groups, kernel_size].
ConvGeom geometry(const Shape& x, const Shape& dy, const Attrs& attrs) {
  const Conv2dBackwardWeightAttrs a = Conv2dBackwardWeightAttrs::from(attrs);
  const std::vector<int64_t>& size = a.kernel_size;
  JANUS_CHECK(size.size() == 2 && size[0] >= 1 && size[1] >= 1, ValueError,
              "{}: kernel_size is [{}], expected 2 positive values (height, width)", kName,
              fmt::join(size, ", "));
  JANUS_CHECK(x.ndim() == 4, ShapeError,
              "{}: input has shape {}, expected 4 dimensions [batch, channels, height, width]",
              kName, x);
  JANUS_CHECK(dy.ndim() == 4, ShapeError,
              "{}: dy has shape {}, expected 4 dimensions [batch, out_channels, height, width]",
              kName, dy);
  const int64_t groups = a.groups;
  JANUS_CHECK(groups >= 1 && x[1] % groups == 0, ValueError,
              "{}: {} input channels do not divide into {} groups", kName, x[1], groups);
  const Shape w{dy[1], x[1] / groups, size[0], size[1]};
  const ConvGeom g = conv_geometry(kName, x, w, a);
  JANUS_CHECK(dy == (Shape{g.n, g.o, g.oh, g.ow}), ShapeError,
              "{}: dy has shape {}, but input {} convolved with a {}x{} kernel gives {}", kName, dy,
              x, size[0], size[1], Shape{g.n, g.o, g.oh, g.ow});
  return g;
}

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const ConvGeom g = geometry(x.shape, args.inputs[1].shape, args.attrs);
  check_conv_dtypes(kName, {x.dtype, args.inputs[1].dtype});
  return {TensorSpec{Shape{g.o, g.c / g.groups, g.kh, g.kw}, x.dtype, x.device}};
}

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  prepare_conv_backward_weight(geometry(args.inputs[0].shape, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const ConvGeom g = geometry(args.in(0).shape(), args.in(1).shape(), args.attrs);
  conv_backward_weight(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
                       args.out(0).raw_data());
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "conv2d_backward_weight",
    .doc = "The weight gradient dweight [O, C / groups, KH, KW] of conv2d from x [N, C, H, W] and "
           "dy [N, O, OH, OW]; kernel_size gives KH and KW.",
    .inputs = {"x", "dy"},
    .outputs = {"dweight"},
    .attrs = conv_attrs({{"kernel_size", AttrType::kInts, std::nullopt,
                          "KH and KW of the weight"}}),
    .attr_fields = attr_fields<Conv2dBackwardWeightAttrs>(),
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    .prepare = prepare,
    // dweight is linear in x and in dy: <g, dweight> = <conv2d(x, g), dy>.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const Conv2dBackwardWeightAttrs a = Conv2dBackwardWeightAttrs::from(g.attrs);
      const Shape& xs = g.x(0).shape();
      const NDArray no_bias = zeros(Shape{g.x(1).shape()[1]}, g.x(0).dtype(), g.x(0).device());
      return {conv2d_backward_data(g.x(1), g.dy(0), {xs[2], xs[3]}, a.stride, a.padding, a.dilation,
                                   a.groups),
              conv2d(g.x(0), g.dy(0), no_bias, a.stride, a.padding, a.dilation, a.groups)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray conv2d_backward_weight(const NDArray& x, const NDArray& dy,
                               std::vector<int64_t> kernel_size, std::vector<int64_t> stride,
                               std::vector<int64_t> padding, std::vector<int64_t> dilation,
                               int64_t groups) {
  static const ops::OpDef& op = ops::get_op("conv2d_backward_weight");
  return ops::invoke(op, {x, dy},
                     {std::move(stride), std::move(padding), std::move(dilation), groups,
                      std::move(kernel_size)})[0];
}
}  // namespace janus
