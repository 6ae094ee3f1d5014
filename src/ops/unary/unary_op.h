// Table rows of the unary family: a row names the operator, gives its scalar function (a
// captureless generic lambda) and its gradient (built from registered operators), and becomes
// one OpDef. Private to src/ops.
#pragma once

#include <string_view>
#include <utility>

#include "../elementwise/nary_loop.h"

namespace janus::ops {

/// y[i] = Fn()(x[i]) computed in compute_t<T> (float for the 16-bit float types), by a loop
/// compiled per instruction set (simd_loop.h).
template <typename T, typename Fn>
void map_elements(const KernelArgs& args) {
  using C = compute_t<T>;
  const T* px = args.in(0).data<T>();
  T* py = args.out(0).data<T>();
  parallel_for(args.out(0).size(), args.ctx, [&](int64_t lo, int64_t hi) {
    simd::map1(py + lo, px + lo, hi - lo,
               [](T x) { return static_cast<T>(Fn()(static_cast<C>(x))); });
  });
}

template <typename Fn>
void map_floating_cpu(const KernelArgs& args) {
  dispatch_floating(args.out(0).dtype(), [&]<typename T>() { map_elements<T, Fn>(args); });
}

template <typename Fn>
void map_any_cpu(const KernelArgs& args) {
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() { map_elements<T, Fn>(args); });
}

/// A unary operator on floating dtypes (TypeError naming it and the dtype otherwise).
template <typename Fn>
OpDef floating_unary_op(std::string_view name, std::string_view doc, Fn /*fn*/, GradFn grad) {
  return {
      .name = name,
      .doc = doc,
      .inputs = {"x"},
      .outputs = {"y"},
      .infer = infer_floating_unary,
      .kernels = {{DeviceType::kCPU, map_floating_cpu<Fn>}},
      .grad = std::move(grad),
      .fusion = FusionClass::kElementwise,
      .inplace_input = 0,
  };
}

/// A unary operator on every dtype; a null `grad` marks it not differentiable.
template <typename Fn>
OpDef any_unary_op(std::string_view name, std::string_view doc, Fn /*fn*/, GradFn grad) {
  const bool differentiable = static_cast<bool>(grad);
  return {
      .name = name,
      .doc = doc,
      .inputs = {"x"},
      .outputs = {"y"},
      .infer = infer_same_as_input(0),
      .kernels = {{DeviceType::kCPU, map_any_cpu<Fn>}},
      .grad = std::move(grad),
      .not_differentiable = !differentiable,
      .fusion = FusionClass::kElementwise,
      .inplace_input = 0,
  };
}

}  // namespace janus::ops
