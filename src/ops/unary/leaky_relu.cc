// leaky_relu(x, alpha): x for x > 0, alpha * x otherwise (floating dtypes).
#include "janus/ops/ops.h"

#include "unary_attrs.h"
#include "unary_op.h"

namespace janus::ops {
namespace {

void leaky_relu_cpu(const KernelArgs& args) {
  const double alpha = LeakyReluAttrs::from(args.attrs).alpha;
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const C a = static_cast<C>(alpha);
    const T* px = args.in(0).data<T>();
    T* py = args.out(0).data<T>();
    parallel_for(args.out(0).size(), args.ctx, [&](int64_t lo, int64_t hi) {
      simd::map1(py + lo, px + lo, hi - lo, [a](T v) {
        const C x = static_cast<C>(v);
        return static_cast<T>(x > C(0) ? x : a * x);
      });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "leaky_relu",
    .doc = "x for x > 0, alpha * x otherwise, elementwise (floating dtypes).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"alpha", AttrType::kFloat, 0.01, "slope for x <= 0"}},
    .attr_fields = attr_fields<LeakyReluAttrs>(),
    .infer = infer_floating_unary,
    .kernels = {{DeviceType::kCPU, leaky_relu_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& x = g.x(0);
      const double alpha = LeakyReluAttrs::from(g.attrs).alpha;
      return {where(greater(x, zeros({}, x.dtype(), x.device())), g.dy(0), g.dy(0) * alpha)};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray leaky_relu(const NDArray& x, double alpha) {
  static const ops::OpDef& op = ops::get_op("leaky_relu");
  return ops::invoke(op, {x}, {alpha})[0];
}
}  // namespace janus
