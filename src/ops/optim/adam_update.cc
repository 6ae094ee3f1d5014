// adam_update(weight, grad, mean, var): one Adam step (Kingma & Ba, arXiv:1412.6980) with bias
// correction, weight and both moments written in place (mutable inputs, no outputs).
#include <cmath>

#include "janus/ops/optim.h"

#include "update_impl.h"

namespace janus::ops {
namespace {

template <typename T>
void adam_update_loop(const KernelArgs& args) {
  T* __restrict w = args.in(0).data<T>();  // updated in place, as are mean and var
  const T* __restrict grad = args.in(1).data<T>();
  T* __restrict mean = args.in(2).data<T>();
  T* __restrict var = args.in(3).data<T>();
  const AdamAttrs a = AdamAttrs::from(args.attrs);
  const double beta1 = a.beta1;
  const double beta2 = a.beta2;
  const int64_t t = a.t;
  // Bias correction folded into two factors: m_hat = mean * c1, v_hat = var * c2 (t = 0: none).
  const double c1 = t > 0 ? 1.0 / (1.0 - std::pow(beta1, static_cast<double>(t))) : 1.0;
  const double c2 = t > 0 ? 1.0 / (1.0 - std::pow(beta2, static_cast<double>(t))) : 1.0;
  const T lr_c1 = static_cast<T>(a.lr * c1);
  const T sc2 = static_cast<T>(c2);
  const T eps = static_cast<T>(a.epsilon);
  const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2);
  const T one_b1 = static_cast<T>(1.0 - beta1), one_b2 = static_cast<T>(1.0 - beta2);
  for_each_prepared<T>(args, a, [=](const auto& prep, int64_t i) {
    const T g = prep(grad[i], w[i]);
    const T m = b1 * mean[i] + one_b1 * g;
    const T v = b2 * var[i] + one_b2 * g * g;
    mean[i] = m;
    var[i] = v;
    w[i] -= lr_c1 * m / (std::sqrt(v * sc2) + eps);
  });
}

void adam_update_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    adam_update_loop<double>(args);
  } else {
    adam_update_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_adam_update(const InferArgs& args) {
  const AdamAttrs a = AdamAttrs::from(args.attrs);
  check_non_negative(args.op.name, "lr", a.lr);
  check_unit_interval(args.op.name, "beta1", a.beta1);
  check_unit_interval(args.op.name, "beta2", a.beta2);
  check_non_negative(args.op.name, "epsilon", a.epsilon);
  check_non_negative(args.op.name, "wd", a.wd);
  const int64_t t = a.t;
  JANUS_CHECK(t >= 0, ValueError,
              "{}: t is {}, expected the step number (>= 1), or 0 for no bias correction",
              args.op.name, t);
  return infer_update(args);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "adam_update",
    .doc = "One Adam step in place: mean = beta1 mean + (1 - beta1) g, var = beta2 var + (1 - "
           "beta2) g^2, weight -= lr mean_hat / (sqrt(var_hat) + epsilon).\n\n"
           "g = clip(rescale_grad * grad) + wd * weight (L2 decay added to the gradient, as in "
           "PyTorch's Adam and MXNet's adam_update; the clipping only when clip_gradient > 0). "
           "mean_hat = mean / (1 - beta1^t), var_hat = var / (1 - beta2^t) with t the step "
           "number from 1, as PyTorch does; t = 0 skips the correction (MXNet's adam_update, "
           "whose optimizer folds it into lr). weight, mean and var are mutable inputs, updated "
           "on the engine; the operator has no outputs.",
    .inputs = {"weight", "grad", "mean", "var"},
    .outputs = {},
    .attrs = {{"lr", AttrType::kFloat, std::nullopt, "learning rate (>= 0)"},
              {"beta1", AttrType::kFloat, 0.9, "decay of the first moment, in [0, 1)"},
              {"beta2", AttrType::kFloat, 0.999, "decay of the second moment, in [0, 1)"},
              {"epsilon", AttrType::kFloat, 1e-8, "added to sqrt(var_hat)"},
              {"wd", AttrType::kFloat, 0.0, "weight decay (L2 penalty added to the gradient)"},
              {"rescale_grad", AttrType::kFloat, 1.0, "factor applied to grad first (1/batch)"},
              {"clip_gradient", AttrType::kFloat, -1.0,
               "clip the rescaled gradient to [-c, c] when > 0"},
              {"t", AttrType::kInt, int64_t{1},
               "step number (from 1) for the bias correction; 0: no correction"}},
    .attr_fields = attr_fields<AdamAttrs>(),
    .infer = infer_adam_update,
    .kernels = {{DeviceType::kCPU, adam_update_cpu}},
    .not_differentiable = true,
    .mutable_inputs = {0, 2, 3},
});

}  // namespace janus::ops

namespace janus {
void adam_update(const NDArray& weight, const NDArray& grad, const NDArray& mean,
                 const NDArray& var, double lr, double beta1, double beta2, double epsilon,
                 double wd, double rescale_grad, double clip_gradient, int64_t t) {
  static const ops::OpDef& op = ops::get_op("adam_update");
  ops::invoke(op, {weight, grad, mean, var},
              {lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient, t});
}
}  // namespace janus
