// mul(a, b): elementwise product with NumPy broadcasting.
#include "janus/ops/ops.h"

#include "binary_loop.h"

namespace janus::ops {
namespace {

void mul_cpu(const KernelArgs& args) {
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    binary_broadcast<T>(args, [](T x, T y) { return wrapping_mul(x, y); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "mul",
    .doc = "Elementwise product of two arrays of one dtype, with NumPy broadcasting.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_broadcast_binary,
    .kernels = {{DeviceType::kCPU, mul_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {sum_to(g.dy(0) * g.x(1), g.x(0).shape()), sum_to(g.dy(0) * g.x(0), g.x(1).shape())};
    },
    .fusion = FusionClass::kBroadcast,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray mul(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("mul");
  return ops::invoke(op, {a, b})[0];
}
}  // namespace janus
