// divide(a, b): elementwise quotient with NumPy broadcasting (floating dtypes).
#include "janus/ops/ops.h"

#include "binary_loop.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void divide_cpu(const KernelArgs& args) {
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    binary_broadcast<T>(args, [](T x, T y) { return static_cast<T>(C(x) / C(y)); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "divide",
    .doc = "Elementwise quotient a / b of two floating arrays of one dtype, with NumPy "
           "broadcasting (IEEE: x / 0 is inf or nan).",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_floating_binary,
    .kernels = {{DeviceType::kCPU, divide_cpu}},
    // y = a / b: da = dy / b, db = -dy * a / b^2 = -(dy * y) / b; then sum to each shape.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& b = g.x(1);
      return {sum_to(divide(g.dy(0), b), g.x(0).shape()),
              sum_to(negative(divide(g.dy(0) * g.y(0), b)), b.shape())};
    },
    .fusion = FusionClass::kBroadcast,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray divide(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("divide");
  return ops::invoke(op, {a, b})[0];
}
}  // namespace janus
