// sum(x, axes, keepdims): sum over the given axes (all when empty).
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "reduce.h"

namespace janus::ops {
namespace {

void sum_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), ReduceAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, accum_zero<T>(),
        [](auto acc, auto v) { return acc + v; }, [](auto acc, int64_t) { return acc; }, args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "sum",
    .doc = "Sum over `axes` (every axis when empty); keepdims keeps them as extent 1.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"}},
    .attr_fields = attr_fields<ReduceAttrs>(),
    .infer = infer_reduce,
    .kernels = {{DeviceType::kCPU, sum_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: the reduced shape -> broadcast back over x's shape.
      const Shape kept = reduced_shape(g.x(0).shape(), ReduceAttrs::from(g.attrs).axes, true);
      return {broadcast_to(reshape(g.dy(0), kept), g.x(0).shape())};
    },
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray sum(const NDArray& x, std::vector<int64_t> axes, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("sum");
  return ops::invoke(op, {x}, {std::move(axes), keepdims})[0];
}

NDArray sum_to(const NDArray& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  // Axes that broadcasting added in front, and axes where the target has extent 1.
  const int lead = x.ndim() - shape.ndim();
  JANUS_CHECK(lead >= 0, ShapeError, "sum_to: cannot reduce shape {} to the longer shape {}",
              x.shape(), shape);
  std::vector<int64_t> axes;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && x.shape()[i] != 1)) axes.push_back(i);
  }
  return reshape(sum(x, axes, /*keepdims=*/true), shape);
}
}  // namespace janus
