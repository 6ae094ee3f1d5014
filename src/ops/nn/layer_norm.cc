// layer_norm(x, gamma, beta, eps): normalisation over the last axis, then scale and shift.
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

template <typename T>
void layer_norm_loop(const KernelArgs& args) {
  const T* x = args.in(0).data<T>();
  const T* gamma = args.in(1).data<T>();
  const T* beta = args.in(2).data<T>();
  T* y = args.out(0).data<T>();
  const Shape& s = args.in(0).shape();
  const int64_t d = s[s.ndim() - 1];
  const int64_t rows = d == 0 ? 0 : args.in(0).size() / d;
  const double eps = LayerNormAttrs::from(args.attrs).eps;
  parallel_for(rows * d, args.ctx, [&](int64_t lo_elem, int64_t hi_elem) {
    for (int64_t r = (lo_elem + d - 1) / d; r < (hi_elem + d - 1) / d; ++r) {  // rows starting here
      const T* xr = x + r * d;
      double mean = 0, var = 0;
      for (int64_t j = 0; j < d; ++j) mean += static_cast<double>(xr[j]);
      mean /= static_cast<double>(d);
      for (int64_t j = 0; j < d; ++j) var += (xr[j] - mean) * (xr[j] - mean);
      const double rstd = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
      for (int64_t j = 0; j < d; ++j) {
        y[r * d + j] = static_cast<T>((xr[j] - mean) * rstd * gamma[j] + beta[j]);
      }
    }
  });
}

void layer_norm_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    layer_norm_loop<double>(args);
  } else {
    layer_norm_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_layer_norm(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& gamma = args.inputs[1];
  const TensorSpec& beta = args.inputs[2];
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError,
              "layer_norm: input has shape {} (a scalar), expected at least 1 dimension", x.shape);
  const int64_t d = x.shape[x.shape.ndim() - 1];
  JANUS_CHECK(gamma.shape == Shape{d} && beta.shape == Shape{d}, ShapeError,
              "layer_norm: gamma {} and beta {} for input {}, expected both [{}] (the last axis)",
              gamma.shape, beta.shape, x.shape, d);
  JANUS_CHECK(x.dtype == gamma.dtype && x.dtype == beta.dtype, TypeError,
              "layer_norm: input, gamma and beta have dtypes {}, {} and {}, expected one dtype",
              x.dtype, gamma.dtype, beta.dtype);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "layer_norm: dtype {} is not supported, expected float32 or float64", x.dtype);
  return {x};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "layer_norm",
    .doc = "(x - mean) / sqrt(var + eps) * gamma + beta, statistics over the last axis of x "
           "(biased variance); gamma and beta have the last axis' extent.",
    .inputs = {"x", "gamma", "beta"},
    .outputs = {"y"},
    .attrs = {{"eps", AttrType::kFloat, 1e-5, "added to the variance"}},
    .attr_fields = attr_fields<LayerNormAttrs>(),
    .infer = infer_layer_norm,
    .kernels = {{DeviceType::kCPU, layer_norm_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return layer_norm_backward(g.x(0), g.x(1), g.dy(0), LayerNormAttrs::from(g.attrs).eps);
    },
});

}  // namespace janus::ops

namespace janus {
NDArray layer_norm(const NDArray& x, const NDArray& gamma, const NDArray& beta, double eps) {
  static const ops::OpDef& op = ops::get_op("layer_norm");
  return ops::invoke(op, {x, gamma, beta}, {eps})[0];
}
}  // namespace janus
