// sgd_mom_update(weight, grad, mom): one SGD step with momentum, mom = momentum * mom - lr * g,
// weight += mom, both written in place (mutable inputs, no outputs).
#include "janus/ops/optim.h"

#include "update_impl.h"

namespace janus::ops {
namespace {

template <typename T>
void sgd_mom_update_loop(const KernelArgs& args) {
  T* __restrict w = args.in(0).data<T>();  // updated in place, as is mom
  const T* __restrict grad = args.in(1).data<T>();
  T* __restrict mom = args.in(2).data<T>();
  const SgdMomAttrs a = SgdMomAttrs::from(args.attrs);
  const T lr = static_cast<T>(a.lr);
  const T momentum = static_cast<T>(a.momentum);
  for_each_prepared<T>(args, a, [=](const auto& prep, int64_t i) {
    const T m = momentum * mom[i] - lr * prep(grad[i], w[i]);
    mom[i] = m;
    w[i] += m;
  });
}

void sgd_mom_update_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    sgd_mom_update_loop<double>(args);
  } else {
    sgd_mom_update_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_sgd_mom_update(const InferArgs& args) {
  const SgdMomAttrs a = SgdMomAttrs::from(args.attrs);
  check_non_negative(args.op.name, "lr", a.lr);
  check_unit_interval(args.op.name, "momentum", a.momentum);
  check_non_negative(args.op.name, "wd", a.wd);
  return infer_update(args);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "sgd_mom_update",
    .doc = "One SGD step with momentum in place: mom = momentum * mom - lr * g, weight += mom, "
           "g = clip(rescale_grad * grad) + wd * weight (MXNet's sgd_mom_update).\n\n"
           "The same step as PyTorch's SGD (dampening 0, no Nesterov) with its buffer b = -mom / "
           "lr for a constant lr. The clipping applies only when clip_gradient > 0. weight and "
           "mom are mutable inputs, updated on the engine; the operator has no outputs.",
    .inputs = {"weight", "grad", "mom"},
    .outputs = {},
    .attrs = {{"lr", AttrType::kFloat, std::nullopt, "learning rate (>= 0)"},
              {"momentum", AttrType::kFloat, 0.0, "weight of the previous step, in [0, 1)"},
              {"wd", AttrType::kFloat, 0.0, "weight decay (L2 penalty added to the gradient)"},
              {"rescale_grad", AttrType::kFloat, 1.0, "factor applied to grad first (1/batch)"},
              {"clip_gradient", AttrType::kFloat, -1.0,
               "clip the rescaled gradient to [-c, c] when > 0"}},
    .attr_fields = attr_fields<SgdMomAttrs>(),
    .infer = infer_sgd_mom_update,
    .kernels = {{DeviceType::kCPU, sgd_mom_update_cpu}},
    .not_differentiable = true,
    .mutable_inputs = {0, 2},
});

}  // namespace janus::ops

namespace janus {
void sgd_mom_update(const NDArray& weight, const NDArray& grad, const NDArray& mom, double lr,
                    double momentum, double wd, double rescale_grad, double clip_gradient) {
  static const ops::OpDef& op = ops::get_op("sgd_mom_update");
  ops::invoke(op, {weight, grad, mom}, {lr, momentum, wd, rescale_grad, clip_gradient});
}
}  // namespace janus
