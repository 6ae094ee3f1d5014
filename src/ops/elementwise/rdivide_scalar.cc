// rdivide_scalar(a, scalar): elementwise scalar / a (floating dtypes).
#include <cmath>

#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void rdivide_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    unary_scalar<T>(args, scalar, [](T x, T s) { return static_cast<T>(C(s) / C(x)); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "rdivide_scalar",
    .doc = "Elementwise scalar / a of a floating array (the number converted to its dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_floating_unary,
    .kernels = {{DeviceType::kCPU, rdivide_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // y = s / a: da = -s / a^2 * dy = -(dy * y) / a.
      return {negative(divide(g.dy(0) * g.y(0), g.x(0)))};
    },
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray divide(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rdivide_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
