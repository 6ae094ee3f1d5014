// mean(x, axes, keepdims): the arithmetic mean over the given axes (all when empty).
#include "reduce_grad.h"

namespace janus::ops {
namespace {

void mean_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), ReduceAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, accum_zero<T>(),
        [](auto acc, auto v) { return acc + v; },
        [](auto acc, int64_t n) {
          // An empty mean is 0/0: NaN in floating point, 0 for integers.
          if constexpr (std::is_integral_v<decltype(acc)>) {
            return n == 0 ? acc : acc / n;
          } else {
            return acc / static_cast<decltype(acc)>(n);
          }
        },
        args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "mean",
    .doc =
        "Arithmetic mean over `axes` (every axis when empty); keepdims keeps them as extent 1.\n\n"
        "Integer inputs give the truncated mean in their own dtype; an empty mean is NaN.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"}},
    .attr_fields = attr_fields<ReduceAttrs>(),
    .infer = infer_reduce,
    .kernels = {{DeviceType::kCPU, mean_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: the reduced shape -> spread evenly over the n elements of each block.
      const NDArray& x = g.x(0);
      const std::vector<int64_t> axes = ReduceAttrs::from(g.attrs).axes;
      const Shape out = reduced_shape(x.shape(), axes, /*keepdims=*/false, "mean");
      const int64_t n = out.numel() == 0 ? 0 : x.size() / out.numel();
      if (x.size() == 0) return {zeros(x.shape(), x.dtype(), x.device())};
      const NDArray spread =
          broadcast_to(reshape(g.dy(0), reduced_shape(x.shape(), axes, true, "mean")), x.shape());
      return {mul(spread, 1.0 / static_cast<double>(n))};
    },
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray mean(const NDArray& x, std::vector<int64_t> axes, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("mean");
  return ops::invoke(op, {x}, {std::move(axes), keepdims})[0];
}
}  // namespace janus
