// conv{1,2,3}d_transpose(x, weight, bias): the transposed convolution (MXNet's Deconvolution),
// the data gradient of the convolution whose input has y's shape, plus a bias. It runs the
// convolution's backward-data kernel (oneDNN, cached by geometry); its gradients are the
// convolution's own operators. One definition, registered once per number of axes.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

// The geometry of the convolution that this call transposes: its input is y [N, O, out...],
// its weight the call's [C, O / groups, k...] and its output x [N, C, in...], with
// out = (in - 1) * stride - 2 * padding + dilation * (k - 1) + 1 + output_padding.
ConvGeom geometry(int dims, const Shape& x, const Shape& w, const Attrs& attrs) {
  const std::string_view name = conv_op_name("transpose", dims);
  const ConvTransposeAttrs a = ConvTransposeAttrs::from(attrs);
  JANUS_CHECK(x.ndim() == dims + 2, ShapeError,
              "{}: input has shape {}, expected {} dimensions [batch, channels, spatial...]", name,
              x, dims + 2);
  JANUS_CHECK(w.ndim() == dims + 2, ShapeError,
              "{}: weight has shape {}, expected {} dimensions [in_channels, out_channels / "
              "groups, kernel...]",
              name, w, dims + 2);
  JANUS_CHECK(x[1] == w[0], ShapeError,
              "{}: input {} has {} channels but weight {} expects {} (its first axis)", name, x,
              x[1], w, w[0]);
  JANUS_CHECK(a.groups >= 1, ValueError, "{}: groups is {}, expected at least 1", name, a.groups);
  const auto stride = spatial_attr(name, "stride", dims, a.stride, 1);
  const auto padding = spatial_attr(name, "padding", dims, a.padding, 0);
  const auto dilation = spatial_attr(name, "dilation", dims, a.dilation, 1);
  const auto out_pad = spatial_attr(name, "output_padding", dims, a.output_padding, 0);
  std::vector<int64_t> ys{x[0], w[1] * a.groups};
  for (size_t i = 0; i < static_cast<size_t>(dims); ++i) {
    JANUS_CHECK(out_pad[i] < stride[i], ValueError,
                "{}: output_padding is [{}], expected each value below the stride [{}]", name,
                fmt::join(out_pad, ", "), fmt::join(stride, ", "));
    const int64_t k = w[static_cast<int>(i) + 2];
    const int64_t out = (x[static_cast<int>(i) + 2] - 1) * stride[i] - 2 * padding[i] +
                        dilation[i] * (k - 1) + 1 + out_pad[i];
    JANUS_CHECK(out >= 1 || x[static_cast<int>(i) + 2] == 0, ShapeError,
                "{}: input {} with kernel {}, stride [{}] and padding [{}] gives an output "
                "extent of {}, expected at least 1",
                name, x, Shape(spatial_extents(w)), fmt::join(stride, ", "),
                fmt::join(padding, ", "), out);
    ys.push_back(std::max<int64_t>(out, 0));
  }
  const ConvGeom g = conv_geometry(name, dims, Shape(std::move(ys)), w, a);
  JANUS_CHECK(g.y_shape() == x, InternalError, "{}: the transposed geometry of {} gives {}", name,
              x, g.y_shape());
  return g;
}

int dims_of(const Shape& x) { return x.ndim() - 2; }

void prepare(const InferArgs& args, std::span<const TensorSpec>) {
  if (args.inputs[0].dtype != DType::kFloat32) return;
  const Shape& x = args.inputs[0].shape;
  prepare_conv_backward_data(geometry(dims_of(x), x, args.inputs[1].shape, args.attrs));
}

void kernel(const KernelArgs& args) {
  const Shape& x = args.in(0).shape();
  const ConvGeom g = geometry(dims_of(x), x, args.in(1).shape(), args.attrs);
  const DType dtype = args.in(0).dtype();
  conv_backward_data(g, dtype, args.in(0).raw_data(), args.in(1).raw_data(), args.out(0).raw_data(),
                     args.ctx);
  conv_add_input_bias(g, dtype, args.in(2).raw_data(), args.out(0).raw_data());
}

OpDef definition(int dims) {
  const std::string_view name = conv_op_name("transpose", dims);
  return {
      .name = name,
      .doc =
          "Transposed convolution (MXNet's Deconvolution) of x [N, C, spatial...] with weight "
          "[C, O / groups, kernel...], plus bias [O]: y [N, O, spatial...].\n\n"
          "Each output extent is (in - 1) * stride - 2 * padding + dilation * (k - 1) + 1 + "
          "output_padding, with output_padding below the stride. It is the data gradient of "
          "the convolution of y's shape with the same weight; without a bias, pass zeros of "
          "shape [O].",
      .inputs = {"x", "weight", "bias"},
      .outputs = {"y"},
      .attrs = conv_attrs(dims, {{"output_padding", AttrType::kInts,
                                  std::vector<int64_t>(static_cast<size_t>(dims), 0),
                                  "added to one side of each output extent"}}),
      .attr_fields = attr_fields<ConvTransposeAttrs>(),
      .infer = [dims, name](const InferArgs& args) -> std::vector<TensorSpec> {
        const TensorSpec& x = args.inputs[0];
        const TensorSpec& w = args.inputs[1];
        const TensorSpec& b = args.inputs[2];
        const ConvGeom g = geometry(dims, x.shape, w.shape, args.attrs);
        JANUS_CHECK(b.shape == Shape{g.c}, ShapeError,
                    "{}: bias has shape {} for weight {}, expected [{}] (one per output channel)",
                    name, b.shape, w.shape, g.c);
        check_conv_dtypes(name, {x.dtype, w.dtype, b.dtype});
        return {TensorSpec{g.x_shape(), x.dtype, x.device}};
      },
      .kernels = {{DeviceType::kCPU, kernel}},
      .prepare = prepare,
      // y is the data gradient of conv(y, weight) evaluated at x: dx is that convolution of dy,
      // dweight its weight gradient with x in dy's place.
      .grad = [dims](const GradArgs& g) -> std::vector<NDArray> {
        const ConvTransposeAttrs a = ConvTransposeAttrs::from(g.attrs);
        const Shape& ws = g.x(1).shape();
        std::vector<NDArray> grads(3);
        if (g.needs(0)) {
          const NDArray no_bias = zeros(Shape{ws[0]}, g.x(1).dtype(), g.x(1).device());
          grads[0] = invoke_conv(dims, g.dy(0), g.x(1), no_bias, a);
        }
        if (g.needs(1)) {
          grads[1] = invoke_conv_backward_weight(dims, g.dy(0), g.x(0), spatial_extents(ws), a);
        }
        if (g.needs(2)) grads[2] = invoke(get_op("conv2d_backward_bias"), {g.dy(0)})[0];
        return grads;
      },
  };
}

const OpRegistrar conv1d_registrar(definition(1));
const OpRegistrar conv2d_registrar(definition(2));
const OpRegistrar conv3d_registrar(definition(3));

}  // namespace
}  // namespace janus::ops

namespace janus {
NDArray conv_transpose(const NDArray& x, const NDArray& weight, const NDArray& bias,
                       std::vector<int64_t> stride, std::vector<int64_t> padding,
                       std::vector<int64_t> output_padding, std::vector<int64_t> dilation,
                       int64_t groups) {
  JANUS_CHECK(x.ndim() >= 3 && x.ndim() <= 5, ShapeError,
              "conv_transpose: input has shape {}, expected 3 to 5 dimensions [batch, channels, "
              "1 to 3 spatial axes]",
              x.shape());
  const ops::OpDef& op = ops::get_op(ops::conv_op_name("transpose", x.ndim() - 2));
  return ops::invoke(op, {x, weight, bias},
                     {std::move(stride), std::move(padding), std::move(dilation), groups,
                      std::move(output_padding)})[0];
}
}  // namespace janus
