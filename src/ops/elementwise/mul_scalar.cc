// mul_scalar(a, scalar): elementwise product of an array and a number.
#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"

namespace janus::ops {
namespace {

void mul_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    unary_scalar<T>(args, scalar, [](T x, T s) { return wrapping_mul(x, s); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "mul_scalar",
    .doc = "Elementwise product of an array and a number (converted to the array's dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_same_as_input(0),
    .kernels = {{DeviceType::kCPU, mul_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {g.dy(0) * ScalarAttrs::from(g.attrs).scalar};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray mul(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("mul_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
