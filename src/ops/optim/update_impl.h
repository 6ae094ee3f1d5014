// What the optimizer update operators share: the shape rule (weight, gradient and state alike,
// float32 or float64, no outputs) and the gradient preparation g = clip(rescale * grad) + wd * w.
// Private to src/ops/optim.
#pragma once

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "optim_attrs.h"

namespace janus::ops {

/// Checks that every input has the weight's (input 0) shape and dtype, and that the dtype is
/// float32 or float64; the errors name the operator and the input. The update operators write
/// their inputs in place, so there is nothing to allocate: no outputs.
inline std::vector<TensorSpec> infer_update(const InferArgs& args) {
  const std::string_view name = args.op.name;
  const TensorSpec& w = args.inputs[0];
  JANUS_CHECK(w.dtype == DType::kFloat32 || w.dtype == DType::kFloat64, TypeError,
              "{}: weight is {}, expected float32 or float64", name, w.dtype);
  for (size_t i = 1; i < args.inputs.size(); ++i) {
    const TensorSpec& in = args.inputs[i];
    JANUS_CHECK(in.shape == w.shape, ShapeError,
                "{}: {} has shape {} but weight has shape {}, expected the same shape", name,
                args.op.inputs[i], in.shape, w.shape);
    JANUS_CHECK(in.dtype == w.dtype, TypeError,
                "{}: {} is {} but weight is {}, expected the same dtype", name, args.op.inputs[i],
                in.dtype, w.dtype);
  }
  return {};
}

/// Checks attribute `attr` of `op`, value v, that must be >= 0 (a learning rate, a weight decay).
inline void check_non_negative(std::string_view op, std::string_view attr, double v) {
  JANUS_CHECK(v >= 0, ValueError, "{}: {} is {}, expected a value >= 0", op, attr, v);
}

/// Checks attribute `attr` of `op`, value v, that must lie in [0, 1) (momentum, the Adam betas).
inline void check_unit_interval(std::string_view op, std::string_view attr, double v) {
  JANUS_CHECK(v >= 0 && v < 1, ValueError, "{}: {} is {}, expected a value in [0, 1)", op, attr, v);
}

/// The gradient an update uses: g = clip(rescale_grad * grad, -c, c) + wd * w, the clipping
/// only when clip_gradient c > 0 (MXNet's convention). kClip is a template parameter so that
/// the loops stay branch-free and vectorize; NaN passes through the clip unchanged.
template <typename T, bool kClip>
struct PreparedGrad {
  T rescale, clip, wd;
  T operator()(T grad, T weight) const {
    T g = rescale * grad;
    if constexpr (kClip) g = std::min(std::max(g, -clip), clip);
    return g + wd * weight;
  }
};

namespace detail {

// One range of an update, compiled per instruction set (simd_loop.h): `elem` is inlined into
// each copy, which vectorizes it with that set's vector width; every copy rounds alike.
template <typename Prep, typename Elem>
JANUS_TARGET_CLONES void update_range(const Prep& prep, int64_t begin, int64_t end, Elem elem) {
  for (int64_t i = begin; i < end; ++i) elem(prep, i);
}

}  // namespace detail

/// Runs elem(prep, i) for every i in [0, n) in parallel, with `prep` a PreparedGrad<T, clip?>
/// built from the update's rescale_grad, clip_gradient and wd (`a`: SgdAttrs, AdamAttrs, ...).
/// elem updates element i only, so the loop vectorizes.
template <typename T, typename UpdateAttrs, typename Elem>
void for_each_prepared(const KernelArgs& args, const UpdateAttrs& a, Elem elem) {
  const double clip = a.clip_gradient;
  const T rescale = static_cast<T>(a.rescale_grad);
  const T wd = static_cast<T>(a.wd);
  const int64_t n = args.in(0).size();
  if (clip > 0) {
    const PreparedGrad<T, true> prep{rescale, static_cast<T>(clip), wd};
    parallel_for(n, args.ctx,
                 [&](int64_t b, int64_t e) { detail::update_range(prep, b, e, elem); });
  } else {
    const PreparedGrad<T, false> prep{rescale, T(0), wd};
    parallel_for(n, args.ctx,
                 [&](int64_t b, int64_t e) { detail::update_range(prep, b, e, elem); });
  }
}

}  // namespace janus::ops
