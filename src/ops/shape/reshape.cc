// reshape(x, shape): the same elements in another shape (one extent may be -1).
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_reshape(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  out.shape = resolve_reshape(args.inputs[0].shape, TargetShapeAttrs::from(args.attrs).shape);
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "reshape",
    .doc = "The same elements in another shape; one extent may be -1 (inferred).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"shape", AttrType::kShape, std::nullopt, "target shape"}},
    .attr_fields = attr_fields<TargetShapeAttrs>(),
    .infer = infer_reshape,
    // Imperative calls return a view (OpDef::view_of) and never run the kernel; in a compiled
    // graph the memory planner usually gives the output the input's buffer, and copy_all then
    // moves nothing.
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
NDArray reshape(const NDArray& x, const Shape& shape) {
  static const ops::OpDef& op = ops::get_op("reshape");
  return ops::invoke(op, {x}, {shape})[0];
}
}  // namespace janus
