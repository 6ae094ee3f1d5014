// full(value, shape, dtype, device): an array with every element equal to value.
#include "janus/ops/ops.h"

#include "fill.h"

namespace janus::ops {
namespace {
void full_cpu(const KernelArgs& args) {
  fill_value(args.out(0), FullAttrs::from(args.attrs).value, args.ctx);
}
}  // namespace

JANUS_DEFINE_OP({
    .name = "full",
    .doc = "Array with every element equal to `value` (converted to the dtype).",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({{"value", AttrType::kFloat, std::nullopt, "the fill value"}}),
    .attr_fields = attr_fields<FullAttrs>(),
    .infer = infer_created<FullAttrs>,
    .kernels = {{DeviceType::kCPU, full_cpu}},
    .not_differentiable = true,  // no inputs
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray full(const Shape& shape, double value, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("full");
  return ops::invoke(op, {}, {value, shape, dtype, device})[0];
}
}  // namespace janus
