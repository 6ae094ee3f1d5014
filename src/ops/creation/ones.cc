// ones(shape, dtype, device): Array of ones.
#include "janus/ops/ops.h"

#include "fill.h"

namespace janus::ops {
namespace {
void ones_cpu(const KernelArgs& args) { fill_value(args.out(0), 1, args.ctx); }
}  // namespace

JANUS_DEFINE_OP({
    .name = "ones",
    .doc = "Array of ones.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({}),
    .attr_fields = attr_fields<CreationAttrs>(),
    .infer = infer_created<CreationAttrs>,
    .kernels = {{DeviceType::kCPU, ones_cpu}},
    .not_differentiable = true,  // no inputs
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray ones(const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("ones");
  return ops::invoke(op, {}, {shape, dtype, device})[0];
}
}  // namespace janus
