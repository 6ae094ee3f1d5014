// layer_norm_backward(x, gamma, dy, eps): the gradients (dx, dgamma, dbeta) of layer_norm.
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

// Per row, with xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dgamma += dy * xhat,  dbeta += dy.
template <typename T>
void layer_norm_backward_loop(const KernelArgs& args) {
  const T* x = args.in(0).data<T>();
  const T* gamma = args.in(1).data<T>();
  const T* dy = args.in(2).data<T>();
  T* dx = args.out(0).data<T>();
  const Shape& s = args.in(0).shape();
  const int64_t d = s[s.ndim() - 1];
  const int64_t rows = d == 0 ? 0 : args.in(0).size() / d;
  const double eps = LayerNormAttrs::from(args.attrs).eps;
  std::vector<double> dgamma(static_cast<size_t>(d), 0.0), dbeta(static_cast<size_t>(d), 0.0);
  std::vector<double> xhat(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* dyr = dy + r * d;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += static_cast<double>(xr[j]);
    mean /= static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
    double mean_g = 0, mean_gx = 0;
    for (int64_t j = 0; j < d; ++j) {
      const size_t uj = static_cast<size_t>(j);
      xhat[uj] = (xr[j] - mean) * rstd;
      const double g = static_cast<double>(dyr[j]) * gamma[j];
      mean_g += g;
      mean_gx += g * xhat[uj];
      dgamma[uj] += dyr[j] * xhat[uj];
      dbeta[uj] += dyr[j];
    }
    mean_g /= static_cast<double>(d);
    mean_gx /= static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) {
      const double g = static_cast<double>(dyr[j]) * gamma[j];
      dx[r * d + j] = static_cast<T>(rstd * (g - mean_g - xhat[static_cast<size_t>(j)] * mean_gx));
    }
  }
  for (int64_t j = 0; j < d; ++j) {
    args.out(1).data<T>()[j] = static_cast<T>(dgamma[static_cast<size_t>(j)]);
    args.out(2).data<T>()[j] = static_cast<T>(dbeta[static_cast<size_t>(j)]);
  }
}

void layer_norm_backward_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    layer_norm_backward_loop<double>(args);
  } else {
    layer_norm_backward_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_layer_norm_backward(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& gamma = args.inputs[1];
  const TensorSpec& dy = args.inputs[2];
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError,
              "layer_norm_backward: input has shape {} (a scalar), expected at least 1 dimension",
              x.shape);
  const int64_t d = x.shape[x.shape.ndim() - 1];
  JANUS_CHECK(gamma.shape == Shape{d} && dy.shape == x.shape, ShapeError,
              "layer_norm_backward: gamma {} and dy {} for input {}, expected [{}] and {}",
              gamma.shape, dy.shape, x.shape, d, x.shape);
  JANUS_CHECK(x.dtype == gamma.dtype && x.dtype == dy.dtype, TypeError,
              "layer_norm_backward: input, gamma and dy have dtypes {}, {} and {}, expected one "
              "dtype",
              x.dtype, gamma.dtype, dy.dtype);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "layer_norm_backward: dtype {} is not supported, expected float32 or float64",
              x.dtype);
  return {x, gamma, gamma};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "layer_norm_backward",
    .doc = "Gradients (dx, dgamma, dbeta) of layer_norm for output gradient dy.\n\n"
           "Not differentiable: second derivatives of layer_norm are not supported yet.",
    .inputs = {"x", "gamma", "dy"},
    .outputs = {"dx", "dgamma", "dbeta"},
    .attrs = {{"eps", AttrType::kFloat, 1e-5, "added to the variance, as in the forward call"}},
    .attr_fields = attr_fields<LayerNormAttrs>(),
    .infer = infer_layer_norm_backward,
    .kernels = {{DeviceType::kCPU, layer_norm_backward_cpu}},
    .not_differentiable = true,
});

}  // namespace janus::ops

namespace janus {
std::vector<NDArray> layer_norm_backward(const NDArray& x, const NDArray& gamma, const NDArray& dy,
                                         double eps) {
  static const ops::OpDef& op = ops::get_op("layer_norm_backward");
  return ops::invoke(op, {x, gamma, dy}, {eps});
}
}  // namespace janus
