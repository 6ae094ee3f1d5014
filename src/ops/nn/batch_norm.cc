// batch_norm(x, gamma, beta, running_mean, running_var): per-channel normalisation; in
// training it uses the batch's statistics and updates the running ones in place.
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "batch_norm_stats.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "batch_norm";

template <typename T>
void batch_norm_loop(const KernelArgs& args) {
  const BatchNormAttrs a = BatchNormAttrs::from(args.attrs);
  const ChannelSplit s = channel_split(kName, args.in(0).shape(), a.axis);
  const double eps = a.eps;
  const double momentum = a.momentum;
  const bool training = a.training;
  const T* x = args.in(0).data<T>();
  const T* gamma = args.in(1).data<T>();
  const T* beta = args.in(2).data<T>();
  T* running_mean = args.in(3).data<T>();  // updated in place (a mutable input)
  T* running_var = args.in(4).data<T>();
  T* y = args.out(0).data<T>();
  T* mean_out = args.out(1).data<T>();
  T* var_out = args.out(2).data<T>();
  const int64_t m = s.per_channel();
  for_each_channel(s, args.ctx, [&](int64_t c) {
    double mean, var;
    if (training) {
      double total = 0;
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) total += static_cast<double>(x[s.index(o, c, i)]);
      }
      mean = total / static_cast<double>(m);
      double sq = 0;
      for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) {
          const double d = static_cast<double>(x[s.index(o, c, i)]) - mean;
          sq += d * d;
        }
      }
      var = sq / static_cast<double>(m);
      // The running variance follows the batch's biased variance, as MXNet's BatchNorm does
      // (PyTorch's takes the unbiased one): Gluon code trained on Janus keeps MXNet's numbers.
      running_mean[c] = static_cast<T>(momentum * running_mean[c] + (1 - momentum) * mean);
      running_var[c] = static_cast<T>(momentum * running_var[c] + (1 - momentum) * var);
    } else {
      mean = static_cast<double>(running_mean[c]);
      var = static_cast<double>(running_var[c]);
    }
    mean_out[c] = static_cast<T>(mean);
    var_out[c] = static_cast<T>(var);
    const double scale = static_cast<double>(gamma[c]) / std::sqrt(var + eps);
    const T a = static_cast<T>(scale);
    const T b = static_cast<T>(static_cast<double>(beta[c]) - mean * scale);
    for (int64_t o = 0; o < s.outer; ++o) {
      const T* xr = x + s.index(o, c, 0);
      T* yr = y + s.index(o, c, 0);
      for (int64_t i = 0; i < s.inner; ++i) yr[i] = xr[i] * a + b;
    }
  });
}

void batch_norm_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    batch_norm_loop<double>(args);
  } else {
    batch_norm_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_batch_norm(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const BatchNormAttrs a = BatchNormAttrs::from(args.attrs);
  const ChannelSplit s = channel_split(kName, x.shape, a.axis);
  constexpr std::string_view kNames[] = {"gamma", "beta", "running_mean", "running_var"};
  for (size_t i = 1; i < 5; ++i) {
    JANUS_CHECK(args.inputs[i].shape == Shape{s.channels}, ShapeError,
                "{}: {} has shape {}, expected [{}] (the channels of input {})", kName,
                kNames[i - 1], args.inputs[i].shape, s.channels, x.shape);
    JANUS_CHECK(args.inputs[i].dtype == x.dtype, TypeError,
                "{}: {} is {} but the input is {}, expected one dtype", kName, kNames[i - 1],
                args.inputs[i].dtype, x.dtype);
  }
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", kName, x.dtype);
  JANUS_CHECK(a.momentum >= 0 && a.momentum <= 1, ValueError,
              "{}: momentum is {}, expected a value in [0, 1]", kName, a.momentum);
  JANUS_CHECK(!a.training || s.per_channel() > 1, ValueError,
              "{}: input {} has {} value(s) per channel, expected more than 1 in training (the "
              "batch statistics need at least 2)",
              kName, x.shape, s.per_channel());
  const TensorSpec stat{Shape{s.channels}, x.dtype, x.device};
  return {x, stat, stat};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "batch_norm",
    .doc = "(x - mean) / sqrt(var + eps) * gamma + beta per channel (axis); in training the "
           "batch's statistics, and running_mean/running_var updated in place.\n\n"
           "Training: mean and biased variance over every axis but `axis`; then running = "
           "momentum * running + (1 - momentum) * batch (the biased variance for running_var, as "
           "MXNet). "
           "Inference: the running statistics. Outputs y and the mean and variance it used.",
    .inputs = {"x", "gamma", "beta", "running_mean", "running_var"},
    .outputs = {"y", "mean", "var"},
    .attrs = {{"eps", AttrType::kFloat, 1e-5, "added to the variance"},
              {"momentum", AttrType::kFloat, 0.9, "weight of the old running statistics"},
              {"training", AttrType::kBool, false, "use and update batch statistics"},
              {"axis", AttrType::kInt, int64_t{1}, "the channel axis"}},
    .attr_fields = attr_fields<BatchNormAttrs>(),
    .infer = infer_batch_norm,
    .kernels = {{DeviceType::kCPU, batch_norm_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const BatchNormAttrs a = BatchNormAttrs::from(g.attrs);
      std::vector<NDArray> d = batch_norm_backward(g.x(0), g.x(1), g.y(1), g.y(2), g.dy(0), g.dy(1),
                                                   g.dy(2), a.training, a.eps, a.axis);
      return {d[0], d[1], d[2], NDArray(), NDArray()};  // running statistics: no gradient
    },
    .mutable_inputs = {3, 4},
});

}  // namespace janus::ops

namespace janus {
NDArray batch_norm(const NDArray& x, const NDArray& gamma, const NDArray& beta,
                   const NDArray& running_mean, const NDArray& running_var, bool training,
                   double momentum, double eps, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("batch_norm");
  return ops::invoke(op, {x, gamma, beta, running_mean, running_var},
                     {eps, momentum, training, axis})[0];
}
}  // namespace janus
