// add(a, b): elementwise sum with NumPy broadcasting.
#include "janus/ops/ops.h"

#include "binary_loop.h"

namespace janus::ops {
namespace {

void add_cpu(const KernelArgs& args) {
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    binary_broadcast<T>(args, [](T x, T y) { return wrapping_add(x, y); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "add",
    .doc = "Elementwise sum of two arrays of one dtype, with NumPy broadcasting.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_broadcast_binary,
    .kernels = {{DeviceType::kCPU, add_cpu}},
    // dy has the broadcast shape: sum it back to each input's shape.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {sum_to(g.dy(0), g.x(0).shape()), sum_to(g.dy(0), g.x(1).shape())};
    },
    .fusion = FusionClass::kBroadcast,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray add(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("add");
  return ops::invoke(op, {a, b})[0];
}
}  // namespace janus
