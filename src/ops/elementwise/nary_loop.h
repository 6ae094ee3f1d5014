// Elementwise loops over any number of broadcast operands of any dtypes, and the dtype rules
// shared by the elementwise and unary families. Private to src/ops.
#pragma once

#include <array>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../op_utils.h"
#include "simd_loop.h"

namespace janus::ops {

/// The type arithmetic on T runs in: float for the 16-bit float types, T otherwise.
template <typename T>
using compute_t =
    std::conditional_t<std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float, T>;

/// Calls `f.template operator()<T>()` for the floating dtypes only (the caller has checked).
template <typename F>
void dispatch_floating(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat64:
      f.template operator()<double>();
      return;
    case DType::kFloat16:
      f.template operator()<float16>();
      return;
    case DType::kBFloat16:
      f.template operator()<bfloat16>();
      return;
    default:
      f.template operator()<float>();
      return;
  }
}

/// Throws TypeError naming `op` unless `dtype` is a floating dtype.
void check_floating(std::string_view op, DType dtype);

/// Shape rule of floating-only unary operators: like input 0, which must be floating.
std::vector<TensorSpec> infer_floating_unary(const InferArgs& args);
/// Shape rule of floating-only binary operators: broadcast, one floating dtype.
std::vector<TensorSpec> infer_floating_binary(const InferArgs& args);
/// Shape rule of comparisons: broadcast, one dtype, bool output.
std::vector<TensorSpec> infer_comparison(const InferArgs& args);

namespace detail {

// Strides of `s` in the coordinates of an output of rank nd (0 on broadcast axes).
inline std::vector<int64_t> broadcast_strides(const Shape& s, int nd) {
  std::vector<int64_t> st(static_cast<size_t>(nd), 0);
  int64_t stride = 1;
  for (int i = s.ndim() - 1; i >= 0; --i) {
    st[static_cast<size_t>(nd - s.ndim() + i)] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return st;
}

template <typename TOut, typename... TIn, typename F, size_t... I>
void broadcast_map_impl(const KernelArgs& args, F& f, std::index_sequence<I...>) {
  constexpr size_t kN = sizeof...(TIn);
  const NDArray& out = args.out(0);
  TOut* __restrict po = out.data<TOut>();
  const std::tuple<const TIn*...> p{args.in(I).template data<TIn>()...};
  const int64_t n = out.size();
  if (((args.in(I).size() == n) && ...)) {
    parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
      if constexpr (kN == 1) {
        simd::map1(po + lo, (std::get<I>(p) + lo)..., hi - lo, f);
      } else if constexpr (kN == 2) {
        simd::map2<1, 1>(po + lo, (std::get<I>(p) + lo)..., hi - lo, f);
      } else if constexpr (kN == 3) {
        simd::map3(po + lo, (std::get<I>(p) + lo)..., hi - lo, f);
      } else {
        for (int64_t i = lo; i < hi; ++i) po[i] = f(std::get<I>(p)[i]...);
      }
    });
    return;
  }
  if (((args.in(I).size() == n || args.in(I).size() == 1) && ...)) {
    // Full-size operands and scalars (relu's gradient: where(y > 0, dy, 0)): one flat pass.
    const std::array<bool, kN> full{(args.in(I).size() == n)...};
    parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = f(std::get<I>(p)[full[I] ? i : 0]...);
    });
    return;
  }
  const Shape& os = out.shape();
  const int nd = os.ndim();  // >= 1 here: a 0-d output has every input of size 1
  const std::array<std::vector<int64_t>, kN> st{broadcast_strides(args.in(I).shape(), nd)...};
  const std::array<int64_t, kN> step{st[I][static_cast<size_t>(nd - 1)]...};
  const int64_t inner = os[nd - 1];
  const int64_t rows = inner == 0 ? 0 : n / inner;
  parallel_for(rows, args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      // Offsets of row r in each input: decompose r over the outer axes.
      std::array<int64_t, kN> off{};
      int64_t rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        const int64_t idx = rem % os[d];
        rem /= os[d];
        ((off[I] += idx * st[I][static_cast<size_t>(d)]), ...);
      }
      TOut* dst = po + r * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = f(std::get<I>(p)[off[I] + i * step[I]]...);
    }
  });
}

}  // namespace detail

/// out[i] = f(in0[i0], in1[i1], ...) with NumPy broadcasting of every input to the output's
/// shape; input k has element type TIn[k], the output TOut.
template <typename TOut, typename... TIn, typename F>
void broadcast_map(const KernelArgs& args, F f) {
  detail::broadcast_map_impl<TOut, TIn...>(args, f, std::index_sequence_for<TIn...>{});
}

}  // namespace janus::ops
