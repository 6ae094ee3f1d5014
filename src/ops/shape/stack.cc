// stack(a, b, axis): a and b of one shape joined along a new axis of extent 2.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {

namespace {

std::vector<TensorSpec> infer_stack(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "stack: inputs have dtypes {} and {}, expected one dtype", a.dtype, b.dtype);
  JANUS_CHECK(a.shape == b.shape, ShapeError,
              "stack: inputs have shapes {} and {}, expected one shape", a.shape, b.shape);
  const int axis = normalize_axis("stack", AxisAttrs::from(args.attrs).axis, a.shape.ndim() + 1);
  std::vector<int64_t> dims = a.shape.dims();
  dims.insert(dims.begin() + axis, 2);
  return {TensorSpec{Shape(std::move(dims)), a.dtype, a.device}};
}

void stack_cpu(const KernelArgs& args) {
  const Shape& a = args.in(0).shape();
  const int axis = normalize_axis("stack", AxisAttrs::from(args.attrs).axis, a.ndim() + 1);
  const int64_t inner = extent_product(a, axis, a.ndim());
  join_rows(args, extent_product(a, 0, axis), inner, inner);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "stack",
    .doc = "a and b (one shape) joined along a new axis of extent 2 at `axis`. Exactly two inputs.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{0}, "position of the new axis in the output"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_stack,
    .kernels = {{DeviceType::kCPU, stack_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: the new axis holds a at 0 and b at 1 -> slice each and drop the axis.
      const int64_t axis = AxisAttrs::from(g.attrs).axis;
      const Shape& s = g.x(0).shape();
      return {reshape(slice_axis(g.dy(0), axis, 0, 1), s),
              reshape(slice_axis(g.dy(0), axis, 1, 2), s)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray stack(const NDArray& a, const NDArray& b, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("stack");
  return ops::invoke(op, {a, b}, {axis})[0];
}
}  // namespace janus
