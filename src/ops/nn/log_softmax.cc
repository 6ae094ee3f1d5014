// log_softmax(x, axis): x minus log(sum(exp(x))) along one axis.
#include "janus/ops/ops.h"

#include "softmax_impl.h"

namespace janus::ops {
namespace {

void log_softmax_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const AxisPlan plan = plan_axis(
      x.shape(), normalize_axis("log_softmax", SoftmaxAttrs::from(args.attrs).axis, x.shape()));
  if (x.dtype() == DType::kFloat64) {
    softmax_loop(x.data<double>(), args.out(0).data<double>(), plan, /*log=*/true, args.ctx);
  } else {
    softmax_loop(x.data<float>(), args.out(0).data<float>(), plan, /*log=*/true, args.ctx);
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "log_softmax",
    .doc = "x - log(sum(exp(x))) along `axis`, computed stably (the maximum is subtracted first).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to normalise, negative from the end"}},
    .attr_fields = attr_fields<SoftmaxAttrs>(),
    .infer = infer_softmax_like,
    .kernels = {{DeviceType::kCPU, log_softmax_cpu}},
    // dx = dy - softmax(x) * sum(dy, axis); softmax is recomputed from x (not exp(y)) so that the
    // rule needs no exp operator and differentiates again through softmax's own rule.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const int64_t axis = SoftmaxAttrs::from(g.attrs).axis;
      return {g.dy(0) + softmax(g.x(0), axis) * (sum(g.dy(0), {axis}, /*keepdims=*/true) * -1.0)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray log_softmax(const NDArray& x, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("log_softmax");
  return ops::invoke(op, {x}, {axis})[0];
}
}  // namespace janus
