// batch_norm_backward(x, gamma, mean, var, dy, dmean, dvar): the gradients (dx, dgamma, dbeta)
// of batch_norm.
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "batch_norm_stats.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "batch_norm_backward";

// Per channel, with xhat = (x - mean) * rstd over its m values:
//   dbeta = sum(dy), dgamma = sum(dy * xhat);
//   training:  dx = gamma * rstd / m * (m * dy - dbeta - xhat * dgamma)
//                   + dmean / m + dvar * 2 * (x - mean) / m   (mean and var depend on x);
//   inference: dx = gamma * rstd * dy.
template <typename T>
void batch_norm_backward_loop(const KernelArgs& args) {
  const BatchNormBackwardAttrs a = BatchNormBackwardAttrs::from(args.attrs);
  const ChannelSplit s = channel_split(kName, args.in(0).shape(), a.axis);
  const double eps = a.eps;
  const bool training = a.training;
  const T* x = args.in(0).data<T>();
  const T* gamma = args.in(1).data<T>();
  const T* mean = args.in(2).data<T>();
  const T* var = args.in(3).data<T>();
  const T* dy = args.in(4).data<T>();
  const T* dmean = args.in(5).data<T>();
  const T* dvar = args.in(6).data<T>();
  T* dx = args.out(0).data<T>();
  T* dgamma = args.out(1).data<T>();
  T* dbeta = args.out(2).data<T>();
  const double m = static_cast<double>(s.per_channel());
  for_each_channel(s, args.ctx, [&](int64_t c) {
    const double mu = mean[c];
    const double rstd = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps);
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t k = s.index(o, c, i);
        sum_dy += static_cast<double>(dy[k]);
        sum_dy_xhat += static_cast<double>(dy[k]) * (static_cast<double>(x[k]) - mu) * rstd;
      }
    }
    dbeta[c] = static_cast<T>(sum_dy);
    dgamma[c] = static_cast<T>(sum_dy_xhat);
    const double g = static_cast<double>(gamma[c]) * rstd;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t k = s.index(o, c, i);
        const double centered = static_cast<double>(x[k]) - mu;
        if (training) {
          dx[k] = static_cast<T>(g / m * (m * dy[k] - sum_dy - centered * rstd * sum_dy_xhat) +
                                 dmean[c] / m + dvar[c] * 2.0 * centered / m);
        } else {
          dx[k] = static_cast<T>(g * dy[k]);
        }
      }
    }
  });
}

void batch_norm_backward_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    batch_norm_backward_loop<double>(args);
  } else {
    batch_norm_backward_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_batch_norm_backward(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const ChannelSplit s =
      channel_split(kName, x.shape, BatchNormBackwardAttrs::from(args.attrs).axis);
  constexpr std::string_view kNames[] = {"x", "gamma", "mean", "var", "dy", "dmean", "dvar"};
  for (size_t i = 1; i < 7; ++i) {
    const Shape want = i == 4 ? x.shape : Shape{s.channels};
    JANUS_CHECK(args.inputs[i].shape == want, ShapeError, "{}: {} has shape {}, expected {}", kName,
                kNames[i], args.inputs[i].shape, want);
    JANUS_CHECK(args.inputs[i].dtype == x.dtype, TypeError,
                "{}: {} is {} but x is {}, expected one dtype", kName, kNames[i],
                args.inputs[i].dtype, x.dtype);
  }
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", kName, x.dtype);
  const TensorSpec stat{Shape{s.channels}, x.dtype, x.device};
  return {x, stat, stat};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "batch_norm_backward",
    .doc = "The gradients (dx, dgamma, dbeta) of batch_norm from dy and the gradients of its "
           "mean and var outputs; mean and var are the statistics the forward used.",
    .inputs = {"x", "gamma", "mean", "var", "dy", "dmean", "dvar"},
    .outputs = {"dx", "dgamma", "dbeta"},
    .attrs = {{"eps", AttrType::kFloat, 1e-5, "added to the variance"},
              {"training", AttrType::kBool, false, "the forward used batch statistics"},
              {"axis", AttrType::kInt, int64_t{1}, "the channel axis"}},
    .attr_fields = attr_fields<BatchNormBackwardAttrs>(),
    .infer = infer_batch_norm_backward,
    .kernels = {{DeviceType::kCPU, batch_norm_backward_cpu}},
    .not_differentiable = true,  // second derivatives of batch norm are not provided
});

}  // namespace janus::ops

namespace janus {
std::vector<NDArray> batch_norm_backward(const NDArray& x, const NDArray& gamma,
                                         const NDArray& mean, const NDArray& var, const NDArray& dy,
                                         const NDArray& dmean, const NDArray& dvar, bool training,
                                         double eps, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("batch_norm_backward");
  return ops::invoke(op, {x, gamma, mean, var, dy, dmean, dvar}, {eps, training, axis});
}
}  // namespace janus
