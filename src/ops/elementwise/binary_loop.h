// Elementwise loops over broadcast operands. Private to src/ops.
#pragma once

#include <vector>

#include "../op_utils.h"
#include "simd_loop.h"

namespace janus::ops {

/// out[i] = f(a[i'], b[i'']) with NumPy broadcasting. Contiguous equal shapes and scalar
/// operands take flat loops, vectorized and compiled per instruction set (simd_loop.h); other
/// broadcasts walk strides.
template <typename T, typename F>
void binary_broadcast(const KernelArgs& args, F f) {
  const NDArray& a = args.in(0);
  const NDArray& b = args.in(1);
  const NDArray& out = args.out(0);
  const T* __restrict pa = a.data<T>();
  const T* __restrict pb = b.data<T>();
  T* __restrict po = out.data<T>();
  const int64_t n = out.size();
  if (a.size() == n && b.size() == n) {
    parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
      simd::map2<1, 1>(po + lo, pa + lo, pb + lo, hi - lo, f);
    });
    return;
  }
  if (b.size() == 1 && a.size() == n) {
    parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
      simd::map2<1, 0>(po + lo, pa + lo, pb, hi - lo, f);
    });
    return;
  }
  if (a.size() == 1 && b.size() == n) {
    parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
      simd::map2<0, 1>(po + lo, pa, pb + lo, hi - lo, f);
    });
    return;
  }
  // General broadcast: strides of a and b in output coordinates (0 on broadcast axes).
  const Shape& os = out.shape();
  const int nd = os.ndim();
  std::vector<int64_t> sa(static_cast<size_t>(nd), 0), sb(static_cast<size_t>(nd), 0);
  auto fill_strides = [nd](const Shape& s, std::vector<int64_t>& st) {
    int64_t stride = 1;
    for (int i = s.ndim() - 1; i >= 0; --i) {
      const int o = nd - s.ndim() + i;
      st[static_cast<size_t>(o)] = s[i] == 1 ? 0 : stride;
      stride *= s[i];
    }
  };
  fill_strides(a.shape(), sa);
  fill_strides(b.shape(), sb);
  const int64_t inner = nd > 0 ? os[nd - 1] : 1;
  const int64_t ia = nd > 0 ? sa[static_cast<size_t>(nd - 1)] : 0;
  const int64_t ib = nd > 0 ? sb[static_cast<size_t>(nd - 1)] : 0;
  const int64_t rows = inner == 0 ? 0 : n / inner;
  parallel_for(rows, args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      // Offsets of row r: decompose it over the outer axes.
      int64_t rem = r, oa = 0, ob = 0;
      for (int d = nd - 2; d >= 0; --d) {
        const int64_t idx = rem % os[d];
        rem /= os[d];
        oa += idx * sa[static_cast<size_t>(d)];
        ob += idx * sb[static_cast<size_t>(d)];
      }
      T* dst = po + r * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = f(pa[oa + i * ia], pb[ob + i * ib]);
    }
  });
}

/// out[i] = f(a[i], s) for a scalar attribute s converted to T.
template <typename T, typename F>
void unary_scalar(const KernelArgs& args, double scalar, F f) {
  const T* pa = args.in(0).data<T>();
  T* po = args.out(0).data<T>();
  const T s = from_double<T>(scalar);
  parallel_for(args.out(0).size(), args.ctx,
               [&](int64_t lo, int64_t hi) { simd::map2<1, 0>(po + lo, pa + lo, &s, hi - lo, f); });
}

}  // namespace janus::ops
