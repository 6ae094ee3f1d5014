// min(x, axes, keepdims): the smallest over the given axes (all when empty); NaN propagates.
#include "reduce_grad.h"

namespace janus::ops {
namespace {

void min_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), ReduceAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, extremum_init<false, Accum<T>>(),
        kExtremumFold<false>, [](auto acc, int64_t) { return acc; }, args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "min",
    .doc = "The smallest over `axes` (every axis when empty); keepdims keeps them as extent 1.\n\n"
           "NaN propagates. Reducing a non-empty output over zero elements is a ValueError. The "
           "gradient goes to the first smallest element of each reduced block.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"}},
    .attr_fields = attr_fields<ReduceAttrs>(),
    .infer = infer_extremum,
    .kernels = {{DeviceType::kCPU, min_cpu}},
    .grad = [](const GradArgs& g) { return extremum_grad(g, /*is_max=*/false); },
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray min(const NDArray& x, std::vector<int64_t> axes, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("min");
  return ops::invoke(op, {x}, {std::move(axes), keepdims})[0];
}
}  // namespace janus
