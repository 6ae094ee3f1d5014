// add_scalar(a, scalar): elementwise sum of an array and a number.
#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"

namespace janus::ops {
namespace {

void add_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    unary_scalar<T>(args, scalar, [](T x, T s) { return wrapping_add(x, s); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "add_scalar",
    .doc = "Elementwise sum of an array and a number (converted to the array's dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_same_as_input(0),
    .kernels = {{DeviceType::kCPU, add_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> { return {g.dy(0)}; },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray add(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("add_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
