// expand_dims(x, axis): x with a new axis of extent 1 inserted at `axis`.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_expand_dims(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const int nd = out.shape.ndim();
  // The new axis may go anywhere in [0, ndim], so the range is that of an (ndim+1)-d array.
  const int axis = normalize_axis("expand_dims", AxisAttrs::from(args.attrs).axis, nd + 1);
  std::vector<int64_t> dims = out.shape.dims();
  dims.insert(dims.begin() + axis, 1);
  out.shape = Shape(std::move(dims));
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "expand_dims",
    .doc = "x with a new axis of extent 1 at `axis` (in [-ndim-1, ndim]).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, std::nullopt, "position of the new axis in the output"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_expand_dims,
    .kernels = {{DeviceType::kCPU, copy_all}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {reshape(g.dy(0), g.x(0).shape())};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
    .view_of = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray expand_dims(const NDArray& x, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("expand_dims");
  return ops::invoke(op, {x}, {axis})[0];
}
}  // namespace janus
