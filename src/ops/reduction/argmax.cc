// argmax(x, axis, keepdims): int64 index of the first largest element along one axis.
#include "reduce_grad.h"

namespace janus::ops {

JANUS_DEFINE_OP({
    .name = "argmax",
    .doc = "int64 index of the first largest element along `axis` (of the first NaN when there is "
           "one).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, std::nullopt, "axis to search, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep the axis with extent 1"}},
    .attr_fields = attr_fields<ArgReduceAttrs>(),
    .infer = infer_arg_extremum,
    .kernels = {{DeviceType::kCPU, arg_extremum_cpu<true>}},
    .not_differentiable = true,  // integer output, piecewise constant
});

}  // namespace janus::ops

namespace janus {
NDArray argmax(const NDArray& x, int64_t axis, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("argmax");
  return ops::invoke(op, {x}, {axis, keepdims})[0];
}
}  // namespace janus
