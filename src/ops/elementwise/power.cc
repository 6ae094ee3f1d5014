// power(a, b): elementwise a ** b with NumPy broadcasting (floating dtypes).
#include <cmath>

#include "janus/ops/ops.h"

#include "binary_loop.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void power_cpu(const KernelArgs& args) {
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    binary_broadcast<T>(args, [](T x, T y) { return static_cast<T>(std::pow(C(x), C(y))); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "power",
    .doc = "Elementwise a ** b of two floating arrays of one dtype, with NumPy broadcasting "
           "(std::pow: a negative base with a non-integer exponent gives nan).",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_floating_binary,
    .kernels = {{DeviceType::kCPU, power_cpu}},
    // y = a^b: da = dy * b * a^(b-1), db = dy * y * log(a) (defined for a > 0).
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& a = g.x(0);
      const NDArray& b = g.x(1);
      return {sum_to(g.dy(0) * b * power(a, b - 1.0), a.shape()),
              sum_to(g.dy(0) * g.y(0) * log(a), b.shape())};
    },
    .fusion = FusionClass::kBroadcast,
});

}  // namespace janus::ops

namespace janus {
NDArray power(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("power");
  return ops::invoke(op, {a, b})[0];
}
}  // namespace janus
