// sgd_update(weight, grad): one plain SGD step, weight -= lr * g, written into weight in place
// (a mutable input, no outputs).
#include "janus/ops/optim.h"

#include "update_impl.h"

namespace janus::ops {
namespace {

template <typename T>
void sgd_update_loop(const KernelArgs& args) {
  T* __restrict w = args.in(0).data<T>();  // updated in place (a mutable input)
  const T* __restrict grad = args.in(1).data<T>();
  const SgdAttrs a = SgdAttrs::from(args.attrs);
  const T lr = static_cast<T>(a.lr);
  for_each_prepared<T>(args, a,
                       [=](const auto& prep, int64_t i) { w[i] -= lr * prep(grad[i], w[i]); });
}

void sgd_update_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    sgd_update_loop<double>(args);
  } else {
    sgd_update_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_sgd_update(const InferArgs& args) {
  const SgdAttrs a = SgdAttrs::from(args.attrs);
  check_non_negative(args.op.name, "lr", a.lr);
  check_non_negative(args.op.name, "wd", a.wd);
  return infer_update(args);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "sgd_update",
    .doc = "One SGD step in place: weight -= lr * g, g = clip(rescale_grad * grad) + wd * weight "
           "(MXNet's sgd_update).\n\n"
           "The clipping to [-clip_gradient, clip_gradient] applies only when clip_gradient > 0. "
           "weight is a mutable input, updated on the engine; the operator has no outputs.",
    .inputs = {"weight", "grad"},
    .outputs = {},
    .attrs = {{"lr", AttrType::kFloat, std::nullopt, "learning rate (>= 0)"},
              {"wd", AttrType::kFloat, 0.0, "weight decay (L2 penalty added to the gradient)"},
              {"rescale_grad", AttrType::kFloat, 1.0, "factor applied to grad first (1/batch)"},
              {"clip_gradient", AttrType::kFloat, -1.0,
               "clip the rescaled gradient to [-c, c] when > 0"}},
    .attr_fields = attr_fields<SgdAttrs>(),
    .infer = infer_sgd_update,
    .kernels = {{DeviceType::kCPU, sgd_update_cpu}},
    .not_differentiable = true,
    .mutable_inputs = {0},
});

}  // namespace janus::ops

namespace janus {
void sgd_update(const NDArray& weight, const NDArray& grad, double lr, double wd,
                double rescale_grad, double clip_gradient) {
  static const ops::OpDef& op = ops::get_op("sgd_update");
  ops::invoke(op, {weight, grad}, {lr, wd, rescale_grad, clip_gradient});
}
}  // namespace janus
