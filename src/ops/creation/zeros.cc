// zeros(shape, dtype, device): Array of zeros.
#include "janus/ops/ops.h"

#include "fill.h"

namespace janus::ops {
namespace {
void zeros_cpu(const KernelArgs& args) { fill_value(args.out(0), 0, args.ctx); }
}  // namespace

JANUS_DEFINE_OP({
    .name = "zeros",
    .doc = "Array of zeros.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({}),
    .attr_fields = attr_fields<CreationAttrs>(),
    .infer = infer_created<CreationAttrs>,
    .kernels = {{DeviceType::kCPU, zeros_cpu}},
    .not_differentiable = true,  // no inputs
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray zeros(const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("zeros");
  return ops::invoke(op, {}, {shape, dtype, device})[0];
}
}  // namespace janus
