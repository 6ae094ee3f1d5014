// conv{1,2,3}d_backward_weight(x, dy): the gradient of a convolution with respect to its weight.
// One definition, registered once per number of axes.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

// The forward geometry: weight is [dy's channels, x's channels / groups, kernel_size].
ConvGeom geometry(int dims, const Shape& x, const Shape& dy, const Attrs& attrs) {
  const std::string_view name = conv_op_name("backward_weight", dims);
  const ConvBackwardWeightAttrs a = ConvBackwardWeightAttrs::from(attrs);
  const std::vector<int64_t>& size = a.kernel_size;
  JANUS_CHECK(
      std::ssize(size) == dims && std::ranges::all_of(size, [](int64_t e) { return e >= 1; }),
      ValueError, "{}: kernel_size is [{}], expected {} positive values", name,
      fmt::join(size, ", "), dims);
  JANUS_CHECK(x.ndim() == dims + 2, ShapeError,
              "{}: input has shape {}, expected {} dimensions [batch, channels, spatial...]", name,
              x, dims + 2);
  JANUS_CHECK(dy.ndim() == dims + 2, ShapeError,
              "{}: dy has shape {}, expected {} dimensions [batch, out_channels, spatial...]", name,
              dy, dims + 2);
  const int64_t groups = a.groups;
  JANUS_CHECK(groups >= 1 && x[1] % groups == 0, ValueError,
              "{}: {} input channels do not divide into {} groups", name, x[1], groups);
  std::vector<int64_t> ws{dy[1], x[1] / groups};
  ws.insert(ws.end(), size.begin(), size.end());
  const ConvGeom g = conv_geometry(name, dims, x, Shape(std::move(ws)), a);
  JANUS_CHECK(dy == g.y_shape(), ShapeError,
              "{}: dy has shape {}, but input {} convolved with a kernel {} gives {}", name, dy, x,
              Shape(size), g.y_shape());
  return g;
}

int dims_of(const Shape& x) { return x.ndim() - 2; }

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  const Shape& x = args.inputs[0].shape;
  prepare_conv_backward_weight(geometry(dims_of(x), x, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const Shape& x = args.in(0).shape();
  const ConvGeom g = geometry(dims_of(x), x, args.in(1).shape(), args.attrs);
  conv_backward_weight(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
                       args.out(0).raw_data(), args.ctx);
}

OpDef definition(int dims) {
  const std::string_view name = conv_op_name("backward_weight", dims);
  return {
      .name = name,
      .doc =
          "The weight gradient dweight [O, C / groups, kernel...] of a convolution from x [N, "
          "C, spatial...] and dy [N, O, spatial...]; kernel_size gives the kernel's extents.",
      .inputs = {"x", "dy"},
      .outputs = {"dweight"},
      .attrs = conv_attrs(dims, {{"kernel_size", AttrType::kInts, std::nullopt,
                                  "the spatial extents of the weight"}}),
      .attr_fields = attr_fields<ConvBackwardWeightAttrs>(),
      .infer = [dims, name](const InferArgs& args) -> std::vector<TensorSpec> {
        const TensorSpec& x = args.inputs[0];
        const ConvGeom g = geometry(dims, x.shape, args.inputs[1].shape, args.attrs);
        check_conv_dtypes(name, {x.dtype, args.inputs[1].dtype});
        return {TensorSpec{g.weight_shape(), x.dtype, x.device}};
      },
      .kernels = {{DeviceType::kCPU, kernel}},
      .prepare = prepare,
      // dweight is linear in x and in dy: <g, dweight> = <conv(x, g), dy>.
      .grad = [dims](const GradArgs& g) -> std::vector<NDArray> {
        const ConvBackwardWeightAttrs a = ConvBackwardWeightAttrs::from(g.attrs);
        const NDArray no_bias = zeros(Shape{g.x(1).shape()[1]}, g.x(0).dtype(), g.x(0).device());
        return {
            invoke_conv_backward_data(dims, g.x(1), g.dy(0), spatial_extents(g.x(0).shape()), a),
            invoke_conv(dims, g.x(0), g.dy(0), no_bias, a)};
      },
  };
}

const OpRegistrar conv1d_registrar(definition(1));
const OpRegistrar conv2d_registrar(definition(2));
const OpRegistrar conv3d_registrar(definition(3));

}  // namespace
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
