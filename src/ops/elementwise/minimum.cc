// minimum(a, b): elementwise smaller of two arrays with NumPy broadcasting; nan propagates.
#include "janus/ops/ops.h"

#include "binary_loop.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void minimum_cpu(const KernelArgs& args) {
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    binary_broadcast<T>(args, [](T x, T y) {
      const C cx(x), cy(y);
      return (cx <= cy || cx != cx) ? x : y;
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "minimum",
    .doc = "Elementwise smaller of two arrays of one dtype, with NumPy broadcasting; a nan in "
           "either input gives nan.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_broadcast_binary,
    .kernels = {{DeviceType::kCPU, minimum_cpu}},
    // The gradient goes to the input that was chosen (to a on ties), summed to its shape.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& a = g.x(0);
      const NDArray& b = g.x(1);
      const NDArray zero = zeros({}, g.dy(0).dtype(), g.dy(0).device());
      const NDArray pick_a = less_equal(a, b);
      return {sum_to(where(pick_a, g.dy(0), zero), a.shape()),
              sum_to(where(pick_a, zero, g.dy(0)), b.shape())};
    },
    .fusion = FusionClass::kBroadcast,
});

}  // namespace janus::ops

namespace janus {
NDArray minimum(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("minimum");
  return ops::invoke(op, {a, b})[0];
}
}  // namespace janus
