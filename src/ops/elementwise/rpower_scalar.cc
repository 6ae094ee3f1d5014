// rpower_scalar(a, scalar): elementwise scalar ** a (floating dtypes).
#include <cmath>

#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void rpower_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    unary_scalar<T>(args, scalar, [](T x, T s) { return static_cast<T>(std::pow(C(s), C(x))); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "rpower_scalar",
    .doc = "Elementwise scalar ** a of a floating array (the number converted to its dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_floating_unary,
    .kernels = {{DeviceType::kCPU, rpower_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const double s = ScalarAttrs::from(g.attrs).scalar;
      // y = s^a: da = dy * y * log(s).
      return {g.dy(0) * g.y(0) * std::log(s)};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray power(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rpower_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
