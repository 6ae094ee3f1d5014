// Softmax over one axis of a contiguous array, shared by softmax and log_softmax. Private to
// src/ops/nn.
#pragma once

#include <algorithm>
#include <cmath>
#include <string_view>

#include "../op_utils.h"
#include "nn_attrs.h"

namespace janus::ops {

/// The array viewed as [outer, extent, inner] around `axis`.
struct AxisPlan {
  int64_t outer = 1, extent = 1, inner = 1;
};

/// `axis` counted from the end when negative; throws IndexError naming `op` when out of range.
inline int normalize_axis(std::string_view op, int64_t axis, const Shape& shape) {
  const int nd = shape.ndim();
  JANUS_CHECK(axis >= -nd && axis < nd, IndexError,
              "{}: axis {} is out of range for input of shape {}, expected -{} <= axis < {}", op,
              axis, shape, nd, nd);
  return static_cast<int>(axis < 0 ? axis + nd : axis);
}

inline AxisPlan plan_axis(const Shape& shape, int axis) {
  AxisPlan p;
  for (int i = 0; i < shape.ndim(); ++i) {
    if (i < axis) p.outer *= shape[i];
    if (i == axis) p.extent = shape[i];
    if (i > axis) p.inner *= shape[i];
  }
  return p;
}

/// Shape rule of softmax and log_softmax: a float32 or float64 input of rank >= 1 and its axis;
/// the output is like the input.
inline std::vector<TensorSpec> infer_softmax_like(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError,
              "{}: input has shape {} (a scalar), expected at least 1 dimension", args.op.name,
              x.shape);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", args.op.name, x.dtype);
  normalize_axis(args.op.name, SoftmaxAttrs::from(args.attrs).axis, x.shape);
  return {x};
}

/// y = softmax(x) (or log_softmax when `log`) along the planned axis, accumulating in double.
template <typename T>
void softmax_loop(const T* x, T* y, const AxisPlan& p, bool log, const RunContext& ctx) {
  const int64_t lanes = p.outer * p.inner;
  parallel_for(lanes * p.extent, ctx, [&](int64_t lo_elem, int64_t hi_elem) {
    // parallel_for splits elements; each lane is handled by the range holding its first element.
    const int64_t lo = (lo_elem + p.extent - 1) / std::max<int64_t>(p.extent, 1);
    const int64_t hi = (hi_elem + p.extent - 1) / std::max<int64_t>(p.extent, 1);
    for (int64_t lane = lo; lane < hi; ++lane) {
      const int64_t base = (lane / p.inner) * p.extent * p.inner + lane % p.inner;
      double mx = -INFINITY;
      for (int64_t j = 0; j < p.extent; ++j)
        mx = std::max(mx, static_cast<double>(x[base + j * p.inner]));
      double total = 0;
      for (int64_t j = 0; j < p.extent; ++j)
        total += std::exp(static_cast<double>(x[base + j * p.inner]) - mx);
      const double log_total = std::log(total);
      for (int64_t j = 0; j < p.extent; ++j) {
        const double v = static_cast<double>(x[base + j * p.inner]) - mx;
        y[base + j * p.inner] = static_cast<T>(log ? v - log_total : std::exp(v) / total);
      }
    }
  });
}

}  // namespace janus::ops
