// power_scalar(a, scalar): elementwise a ** scalar (floating dtypes).
#include <cmath>

#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void power_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    unary_scalar<T>(args, scalar, [](T x, T s) { return static_cast<T>(std::pow(C(x), C(s))); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "power_scalar",
    .doc = "Elementwise a ** scalar of a floating array (the number converted to its dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_floating_unary,
    .kernels = {{DeviceType::kCPU, power_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const double s = ScalarAttrs::from(g.attrs).scalar;
      // y = a^s: da = dy * s * a^(s-1).
      return {g.dy(0) * s * power(g.x(0), s - 1.0)};
    },
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray power(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("power_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
