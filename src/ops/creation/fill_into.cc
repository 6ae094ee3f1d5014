// fill_into(dst, value): every element of an existing array set to value, in place (zeroing a
// gradient buffer that others may hold, as MXNet's zero_grad does).
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "fill.h"

namespace janus::ops {
namespace {

void fill_into_cpu(const KernelArgs& args) {
  fill_value(args.in(0), FillIntoAttrs::from(args.attrs).value, args.ctx);
}

std::vector<TensorSpec> infer_fill_into(const InferArgs&) { return {}; }

}  // namespace

JANUS_DEFINE_OP({
    .name = "fill_into",
    .doc = "Sets every element of dst (a mutable input) to `value` (converted to dst's dtype), "
           "in place.",
    .inputs = {"dst"},
    .outputs = {},
    .attrs = {{"value", AttrType::kFloat, std::nullopt, "the fill value"}},
    .attr_fields = attr_fields<FillIntoAttrs>(),
    .infer = infer_fill_into,
    .kernels = {{DeviceType::kCPU, fill_into_cpu}},
    .not_differentiable = true,
    .mutable_inputs = {0},
});

}  // namespace janus::ops

namespace janus {
void fill_into(const NDArray& dst, double value) {
  static const ops::OpDef& op = ops::get_op("fill_into");
  ops::invoke(op, {dst}, {value});
}
}  // namespace janus
