// softmax(x, axis): exp(x) normalised to sum 1 along one axis.
#include "janus/ops/ops.h"

#include "softmax_impl.h"

namespace janus::ops {
namespace {

void softmax_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const AxisPlan plan = plan_axis(
      x.shape(), normalize_axis("softmax", SoftmaxAttrs::from(args.attrs).axis, x.shape()));
  if (x.dtype() == DType::kFloat64) {
    softmax_loop(x.data<double>(), args.out(0).data<double>(), plan, /*log=*/false, args.ctx);
  } else {
    softmax_loop(x.data<float>(), args.out(0).data<float>(), plan, /*log=*/false, args.ctx);
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "softmax",
    .doc = "exp(x) / sum(exp(x)) along `axis`, computed stably (the maximum is subtracted first).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to normalise, negative from the end"}},
    .attr_fields = attr_fields<SoftmaxAttrs>(),
    .infer = infer_softmax_like,
    .kernels = {{DeviceType::kCPU, softmax_cpu}},
    // dx = y * (dy - sum(dy * y, axis)), the sum kept as extent 1 so that it broadcasts.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& y = g.y(0);
      const NDArray ydy = y * g.dy(0);
      return {ydy + y * (sum(ydy, {SoftmaxAttrs::from(g.attrs).axis}, /*keepdims=*/true) * -1.0)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray softmax(const NDArray& x, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("softmax");
  return ops::invoke(op, {x}, {axis})[0];
}
}  // namespace janus
