// conv{1,2,3}d_backward_data(dy, weight): the gradient of a convolution with respect to its
// input (a transposed convolution). One definition, registered once per number of axes.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

// The forward geometry: x is [dy's batch, weight's channels x groups, input_size].
ConvGeom geometry(int dims, const Shape& dy, const Shape& w, const Attrs& attrs) {
  const std::string_view name = conv_op_name("backward_data", dims);
  const ConvBackwardDataAttrs a = ConvBackwardDataAttrs::from(attrs);
  const std::vector<int64_t>& size = a.input_size;
  JANUS_CHECK(
      std::ssize(size) == dims && std::ranges::all_of(size, [](int64_t e) { return e >= 0; }),
      ValueError, "{}: input_size is [{}], expected {} non-negative values", name,
      fmt::join(size, ", "), dims);
  JANUS_CHECK(dy.ndim() == dims + 2, ShapeError,
              "{}: dy has shape {}, expected {} dimensions [batch, out_channels, spatial...]", name,
              dy, dims + 2);
  JANUS_CHECK(w.ndim() == dims + 2, ShapeError, "{}: weight has shape {}, expected {} dimensions",
              name, w, dims + 2);
  std::vector<int64_t> xs{dy[0], w[1] * a.groups};
  xs.insert(xs.end(), size.begin(), size.end());
  const Shape x(std::move(xs));
  const ConvGeom g = conv_geometry(name, dims, x, w, a);
  JANUS_CHECK(dy == g.y_shape(), ShapeError,
              "{}: dy has shape {}, but input {} convolved with weight {} gives {}", name, dy, x, w,
              g.y_shape());
  return g;
}

int dims_of(const Shape& dy) { return dy.ndim() - 2; }

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  const Shape& dy = args.inputs[0].shape;
  prepare_conv_backward_data(geometry(dims_of(dy), dy, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const Shape& dy = args.in(0).shape();
  const ConvGeom g = geometry(dims_of(dy), dy, args.in(1).shape(), args.attrs);
  conv_backward_data(g, args.in(0).dtype(), args.in(0).raw_data(), args.in(1).raw_data(),
                     args.out(0).raw_data(), args.ctx);
}

OpDef definition(int dims) {
  const std::string_view name = conv_op_name("backward_data", dims);
  return {
      .name = name,
      .doc =
          "The input gradient dx [N, C, spatial...] of a convolution from dy [N, O, "
          "spatial...] and weight (a transposed convolution); input_size gives dx's spatial "
          "extents.",
      .inputs = {"dy", "weight"},
      .outputs = {"dx"},
      .attrs = conv_attrs(dims, {{"input_size", AttrType::kInts, std::nullopt,
                                  "the spatial extents of the forward input"}}),
      .attr_fields = attr_fields<ConvBackwardDataAttrs>(),
      .infer = [dims, name](const InferArgs& args) -> std::vector<TensorSpec> {
        const TensorSpec& dy = args.inputs[0];
        const ConvGeom g = geometry(dims, dy.shape, args.inputs[1].shape, args.attrs);
        check_conv_dtypes(name, {dy.dtype, args.inputs[1].dtype});
        return {TensorSpec{g.x_shape(), dy.dtype, dy.device}};
      },
      .kernels = {{DeviceType::kCPU, kernel}},
      .prepare = prepare,
      // dx is linear in dy and in weight: <g, dx> = <conv(g, weight), dy>.
      .grad = [dims](const GradArgs& g) -> std::vector<NDArray> {
        const ConvBackwardDataAttrs a = ConvBackwardDataAttrs::from(g.attrs);
        const Shape& ws = g.x(1).shape();
        const NDArray no_bias = zeros(Shape{ws[0]}, g.x(1).dtype(), g.x(1).device());
        return {invoke_conv(dims, g.dy(0), g.x(1), no_bias, a),
                invoke_conv_backward_weight(dims, g.dy(0), g.x(0), spatial_extents(ws), a)};
      },
  };
}

const OpRegistrar conv1d_registrar(definition(1));
const OpRegistrar conv2d_registrar(definition(2));
const OpRegistrar conv3d_registrar(definition(3));

}  // namespace
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
