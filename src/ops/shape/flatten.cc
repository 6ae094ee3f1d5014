// flatten(x): [d0, d1, ..., dk] -> [d0, d1 * ... * dk], keeping the leading (batch) axis.
#include "janus/ops/ops.h"

#include "layout.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_flatten(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const Shape& s = out.shape;
  JANUS_CHECK(
      s.ndim() >= 1, ShapeError,
      "flatten: input has shape {} (0 dimensions), expected at least 1 (a leading axis to keep)",
      s);
  out.shape = Shape{s[0], extent_product(s, 1, s.ndim())};
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "flatten",
    .doc = "Keeps axis 0 and merges the others: [d0, d1, ..., dk] -> [d0, d1*...*dk] ([d0] -> [d0, "
           "1]).",
    .inputs = {"x"},
    .outputs = {"y"},
    .infer = infer_flatten,
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
NDArray flatten(const NDArray& x) {
  static const ops::OpDef& op = ops::get_op("flatten");
  return ops::invoke(op, {x})[0];
}
}  // namespace janus
