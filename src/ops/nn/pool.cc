// 2-D pooling loops, parallel over the (batch, channel) planes.
#include "pool.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "janus/base/error.h"

#include "../elementwise/relu_rule.h"
#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "plane_sum.h"

namespace janus::ops {
namespace {

std::vector<int64_t> pair_of(std::string_view op, std::string_view name,
                             const std::vector<int64_t>& v, int64_t min_value) {
  JANUS_CHECK(v.size() == 1 || v.size() == 2, ValueError,
              "{}: {} has {} values [{}], expected 1 or 2 (height, width)", op, name, v.size(),
              fmt::join(v, ", "));
  std::vector<int64_t> out = v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
  JANUS_CHECK(out[0] >= min_value && out[1] >= min_value, ValueError,
              "{}: {} is [{}], expected values >= {}", op, name, fmt::join(v, ", "), min_value);
  return out;
}

// The window of output (oy, ox), clipped to the input: [y0, y1) x [x0, x1). In ceil mode a last
// window may run past the padding (it is clipped there, as MXNet's "full" convention does) or
// start past the input (it is empty: max pooling gives the dtype's lowest value, average pooling
// 0, as in MXNet).
struct Window {
  int64_t y0, y1, x0, x1;
  int64_t padded_count;  // taps including the padding (clipped to input + padding)
  bool empty() const { return y0 >= y1 || x0 >= x1; }
  int64_t taps() const { return (y1 - y0) * (x1 - x0); }
};

Window window(const PoolGeom& g, int64_t oy, int64_t ox) {
  const int64_t ys = oy * g.stride_h - g.pad_h, xs = ox * g.stride_w - g.pad_w;
  const int64_t ye = std::min(ys + g.kh, g.h + g.pad_h), xe = std::min(xs + g.kw, g.w + g.pad_w);
  return {std::max<int64_t>(ys, 0), std::min(ye, g.h), std::max<int64_t>(xs, 0), std::min(xe, g.w),
          (ye - ys) * (xe - xs)};
}

// body(plane) for each of the n * c planes, split across the kernel's threads.
template <typename Body>
void for_each_plane(const PoolGeom& g, const RunContext& ctx, Body body) {
  const int64_t planes = g.n * g.c;
  const int64_t per_plane = std::max<int64_t>(1, g.h * g.w);
  // parallel_for splits element counts; hand it whole planes.
  parallel_for(planes * per_plane, ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t p = (lo + per_plane - 1) / per_plane; p < (hi + per_plane - 1) / per_plane; ++p)
      body(p);
  });
}

// No padding, and every window inside the input (ceil mode can add a last, partial one).
bool windows_inside(const PoolGeom& g) {
  return g.pad_h == 0 && g.pad_w == 0 && (g.oh - 1) * g.stride_h + g.kh <= g.h &&
         (g.ow - 1) * g.stride_w + g.kw <= g.w;
}

// 2x2 windows with stride 2 inside the input (LeNet's, and most CNNs' pooling): the four taps
// are read directly, without window arithmetic, in the generic loops' order (same results, bit
// for bit, NaN included).
bool is_2x2_stride_2(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.stride_h == 2 && g.stride_w == 2 && windows_inside(g);
}

template <typename T>
void max_pool_2x2_plane(const PoolGeom& g, const T* in, T* out) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const T* r0 = in + 2 * oy * g.w;
    const T* r1 = r0 + g.w;
    T* o = out + oy * g.ow;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      T best = r0[2 * ox];
      best = std::max(best, r0[2 * ox + 1]);
      best = std::max(best, r1[2 * ox]);
      o[ox] = std::max(best, r1[2 * ox + 1]);
    }
  }
}

// One row of 2x2 windows: the gradient goes to the first maximum of each window, row by row,
// as the generic loop picks it (a strict >, so ties and NaNs keep the earlier tap), and zeros to
// the other three taps. Branch-free: which tap holds a window's maximum is data, and branching
// on it mispredicted about every other window (the branching loop took 9% of a LeNet training
// step's CPU time, 13 times the forward pooling). The choices are bit masks on the values' bits:
// the loop vectorizes (one copy per instruction set, simd_loop.h), and its scalar remainder,
// which is most of a short row (LeNet's are 14 and 5 windows), stays branch-free too (GCC turns
// selects of floating-point values back into branches there).
// With kRelu, each tap's gradient then passes relu's gradient with the tap as relu's output
// (relu_backward(x, dx)): one more mask, the bits of the two calls.
template <bool kRelu, typename T>
JANUS_TARGET_CLONES void max_pool_2x2_backward_row(const T* __restrict r0, const T* __restrict r1,
                                                   const T* __restrict d, T* __restrict o0,
                                                   T* __restrict o1, int64_t ow) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const auto pick = [](U mask, T yes, T no) {  // mask is all ones or all zeros
    return std::bit_cast<T>((std::bit_cast<U>(yes) & mask) | (std::bit_cast<U>(no) & ~mask));
  };
  for (int64_t ox = 0; ox < ow; ++ox) {
    const int64_t x = 2 * ox;
    const T a = r0[x], b = r0[x + 1], c = r1[x], e = r1[x + 1];
    const U m1 = -U(b > a);
    const T best1 = pick(m1, b, a);
    const U m2 = -U(c > best1);
    const U m3 = -U(e > pick(m2, c, best1));
    const U v3 = std::bit_cast<U>(T(0) + d[ox]);  // as 0 += dy: -0.0 becomes +0.0
    const U v2 = v3 & ~m3, v1 = v2 & ~m2;         // what is left for the earlier taps
    U ra = ~U(0), rb = ~U(0), rc = ~U(0), re = ~U(0);
    if constexpr (kRelu) {
      ra = -U(relu_passes(a)), rb = -U(relu_passes(b));
      rc = -U(relu_passes(c)), re = -U(relu_passes(e));
    }
    o1[x + 1] = std::bit_cast<T>(v3 & m3 & re);
    o1[x] = std::bit_cast<T>(v2 & m2 & rc);
    o0[x + 1] = std::bit_cast<T>(v1 & m1 & rb);
    o0[x] = std::bit_cast<T>(v1 & ~m1 & ra);
  }
}

#if defined(__x86_64__)
// max_pool_2x2_backward_row for float32 with AVX-512, 16 windows at a time and the last (or
// only) group of a row masked: the same comparisons (ordered >, false at NaN) and selections on
// the same values, so the same bits. The rows of LeNet (14 and 5 windows) are shorter than the
// generic loop's vector body, which left them to its scalar remainder (6 cycles a window, the
// backward took 3 times the forward pooling's time). kRelu: as in the generic row, relu's
// gradient too (a tap passes where !(tap <= 0): ordered or not, NaN passes).
// The taps of up to 16 2x2 windows of a row of ow windows, from window ox: a and b from the first
// row, c and e from the second, one window per lane (0 past the row's end); the mask of the
// windows and those of the row's 2n taps (the first 16 and the rest).
struct Windows16 {
  __mmask16 windows, taps_lo, taps_hi;
  __m512 a, b, c, e;
};
__attribute__((target("avx512f"))) inline Windows16 load_windows16(const float* r0, const float* r1,
                                                                   int64_t ox, int64_t ow) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t n = std::min<int64_t>(16, ow - ox);  // windows in this group
  Windows16 w;
  w.windows = static_cast<__mmask16>((uint32_t{1} << n) - 1);
  w.taps_lo = static_cast<__mmask16>(n >= 8 ? 0xffff : (uint32_t{1} << 2 * n) - 1);
  w.taps_hi = static_cast<__mmask16>(n <= 8 ? 0 : (uint32_t{1} << 2 * (n - 8)) - 1);
  const int64_t x = 2 * ox;
  const __m512 r0_lo = _mm512_maskz_loadu_ps(w.taps_lo, r0 + x);
  const __m512 r0_hi = _mm512_maskz_loadu_ps(w.taps_hi, r0 + x + 16);
  const __m512 r1_lo = _mm512_maskz_loadu_ps(w.taps_lo, r1 + x);
  const __m512 r1_hi = _mm512_maskz_loadu_ps(w.taps_hi, r1 + x + 16);
  w.a = _mm512_permutex2var_ps(r0_lo, even, r0_hi);
  w.b = _mm512_permutex2var_ps(r0_lo, odd, r0_hi);
  w.c = _mm512_permutex2var_ps(r1_lo, even, r1_hi);
  w.e = _mm512_permutex2var_ps(r1_lo, odd, r1_hi);
  return w;
}

template <bool kRelu>
__attribute__((target("avx512f"))) void max_pool_2x2_backward_row_avx512(const float* r0,
                                                                         const float* r1,
                                                                         const float* d, float* o0,
                                                                         float* o1, int64_t ow) {
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t ox = 0; ox < ow; ox += 16) {
    const auto [windows, taps_lo, taps_hi, a, b, c, e] = load_windows16(r0, r1, ox, ow);
    const int64_t x = 2 * ox;
    const __mmask16 m1 = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
    const __m512 best1 = _mm512_mask_blend_ps(m1, a, b);
    const __mmask16 m2 = _mm512_cmp_ps_mask(c, best1, _CMP_GT_OQ);
    const __mmask16 m3 = _mm512_cmp_ps_mask(e, _mm512_mask_blend_ps(m2, best1, c), _CMP_GT_OQ);
    // As 0 += dy: -0.0 becomes +0.0.
    const __m512 v = _mm512_add_ps(zero, _mm512_maskz_loadu_ps(windows, d + ox));
    __mmask16 k3 = m3, k2 = m2 & ~m3, k1 = m1 & ~m2 & ~m3, k0 = ~m1 & ~m2 & ~m3;
    if constexpr (kRelu) {
      k0 &= _mm512_cmp_ps_mask(a, zero, _CMP_NLE_UQ);
      k1 &= _mm512_cmp_ps_mask(b, zero, _CMP_NLE_UQ);
      k2 &= _mm512_cmp_ps_mask(c, zero, _CMP_NLE_UQ);
      k3 &= _mm512_cmp_ps_mask(e, zero, _CMP_NLE_UQ);
    }
    const __m512 t0 = _mm512_maskz_mov_ps(k0, v), t1 = _mm512_maskz_mov_ps(k1, v);
    const __m512 t2 = _mm512_maskz_mov_ps(k2, v), t3 = _mm512_maskz_mov_ps(k3, v);
    _mm512_mask_storeu_ps(o0 + x, taps_lo, _mm512_permutex2var_ps(t0, low, t1));
    _mm512_mask_storeu_ps(o0 + x + 16, taps_hi, _mm512_permutex2var_ps(t0, high, t1));
    _mm512_mask_storeu_ps(o1 + x, taps_lo, _mm512_permutex2var_ps(t2, low, t3));
    _mm512_mask_storeu_ps(o1 + x + 16, taps_hi, _mm512_permutex2var_ps(t2, high, t3));
  }
}

// avg_pool_2x2_row for float32 with AVX-512, 16 windows at a time and the last (or only) group
// of a row masked: the taps deinterleaved into four vectors and added in avg_2x2's order, so the
// same bits. The generic loop's vector body is 16 windows wide (AVX-512), so rows shorter than
// that (LeNet's hold 14 and 5) would all go through its scalar remainder.
__attribute__((target("avx512f"))) void avg_pool_2x2_row_avx512(const float* r0, const float* r1,
                                                                float* o, int64_t ow) {
  const __m512 quarter = _mm512_set1_ps(4.0f);
  for (int64_t ox = 0; ox < ow; ox += 16) {
    const Windows16 w = load_windows16(r0, r1, ox, ow);
    __m512 sum = _mm512_add_ps(_mm512_setzero_ps(), w.a);
    sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(sum, w.b), w.c), w.e);
    _mm512_mask_storeu_ps(o + ox, w.windows, _mm512_div_ps(sum, quarter));
  }
}
#endif

template <bool kRelu, typename T>
void max_pool_2x2_backward_plane(const PoolGeom& g, const T* in, const T* d, T* out) {
  if (g.h % 2 != 0 || g.w % 2 != 0) std::fill(out, out + g.h * g.w, T(0));  // rows no window reads
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (simd::has_avx512f()) {
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const float* r0 = in + 2 * oy * g.w;
        float* o0 = out + 2 * oy * g.w;
        max_pool_2x2_backward_row_avx512<kRelu>(r0, r0 + g.w, d + oy * g.ow, o0, o0 + g.w, g.ow);
      }
      return;
    }
  }
#endif
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const T* r0 = in + 2 * oy * g.w;
    T* o0 = out + 2 * oy * g.w;
    max_pool_2x2_backward_row<kRelu>(r0, r0 + g.w, d + oy * g.ow, o0, o0 + g.w, g.ow);
  }
}

// One row of 2x2 average windows, summed in the generic loop's order (avg_2x2). One copy per
// instruction set (simd_loop.h): the loop vectorizes.
template <typename T>
JANUS_TARGET_CLONES void avg_pool_2x2_row(const T* __restrict r0, const T* __restrict r1,
                                          T* __restrict o, int64_t ow) {
  for (int64_t ox = 0; ox < ow; ++ox) {
    const int64_t x = 2 * ox;
    o[ox] = avg_2x2(r0[x], r0[x + 1], r1[x], r1[x + 1]);
  }
}

// avg_pool_2x2_channels_last: each window's four taps are rows of c floats, the loop over the
// channels vectorizes, and the results go to c planes.
JANUS_TARGET_CLONES void avg_pool_2x2_channels_last_image(const float* __restrict in, int64_t w,
                                                          int64_t c, float* __restrict out,
                                                          int64_t oh, int64_t ow) {
  const int64_t plane = oh * ow;
  for (int64_t oy = 0; oy < oh; ++oy) {
    for (int64_t ox = 0; ox < ow; ++ox) {
      const float* t0 = in + (2 * oy * w + 2 * ox) * c;
      const float* t2 = t0 + w * c;
      float* o = out + oy * ow + ox;
      for (int64_t k = 0; k < c; ++k) o[k * plane] = avg_2x2(t0[k], t0[c + k], t2[k], t2[c + k]);
    }
  }
}

// The backward of avg_pool_2x2_row: each tap gets its window's dy / 4, as 0 += dy / 4.
template <typename T>
JANUS_TARGET_CLONES void avg_pool_2x2_backward_row(const T* __restrict d, T* __restrict o0,
                                                   T* __restrict o1, int64_t ow) {
  for (int64_t ox = 0; ox < ow; ++ox) {
    const int64_t x = 2 * ox;
    const T share = T(0) + d[ox] / T(4);
    o0[x] = share;
    o0[x + 1] = share;
    o1[x] = share;
    o1[x + 1] = share;
  }
}

// acc[ox] += in[ox * stride] for a row of windows: one tap of each window. Adding the taps of
// unpadded windows tap by tap (row by row, from 0) sums each window in the generic loop's order,
// and the loop over the windows vectorizes.
template <typename T>
JANUS_TARGET_CLONES void add_tap_row(T* __restrict acc, const T* __restrict in, int64_t stride,
                                     int64_t ow) {
  for (int64_t ox = 0; ox < ow; ++ox) acc[ox] += in[ox * stride];
}

template <typename T>
JANUS_TARGET_CLONES void divide_row(T* __restrict o, T divisor, int64_t ow) {
  for (int64_t ox = 0; ox < ow; ++ox) o[ox] /= divisor;
}

// Average pooling of one plane without padding: every window holds kh x kw taps.
template <typename T>
void avg_pool_unpadded_plane(const PoolGeom& g, const T* in, T* out) {
  const T taps = static_cast<T>(g.kh * g.kw);
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    T* o = out + oy * g.ow;
    std::fill(o, o + g.ow, T(0));
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const T* row = in + (oy * g.stride_h + ky) * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) add_tap_row(o, row + kx, g.stride_w, g.ow);
    }
    divide_row(o, taps, g.ow);
  }
}

template <typename F>
void float_dispatch(DType dtype, F f) {
  if (dtype == DType::kFloat64) {
    f.template operator()<double>();
  } else {
    f.template operator()<float>();
  }
}

}  // namespace

std::vector<AttrDef> pool_attrs(std::vector<AttrDef> extra) {
  std::vector<AttrDef> attrs = {
      {"kernel_size", AttrType::kInts, std::nullopt, "window (height, width), or one for both"},
      {"stride", AttrType::kInts, std::vector<int64_t>{},
       "step (height, width); empty: the kernel size"},
      {"padding", AttrType::kInts, std::vector<int64_t>{0, 0},
       "implicit padding on each side, at most half the kernel"},
      {"ceil_mode", AttrType::kBool, false,
       "round the output extent up (MXNet's pooling_convention 'full'): a last window may run "
       "past the padding; it is clipped there"}};
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  return attrs;
}

PoolGeom pool_geometry(std::string_view op, const Shape& x, const PoolAttrs& attrs) {
  JANUS_CHECK(x.ndim() == 4, ShapeError,
              "{}: input has shape {}, expected 4 dimensions [batch, channels, height, width]", op,
              x);
  const auto kernel = pair_of(op, "kernel_size", attrs.kernel_size, 1);
  const auto stride = attrs.stride.empty() ? kernel : pair_of(op, "stride", attrs.stride, 1);
  const auto padding = pair_of(op, "padding", attrs.padding, 0);
  JANUS_CHECK(2 * padding[0] <= kernel[0] && 2 * padding[1] <= kernel[1], ValueError,
              "{}: padding [{}] is more than half the kernel [{}]", op, fmt::join(padding, ", "),
              fmt::join(kernel, ", "));
  JANUS_CHECK(x[2] > 0 && x[3] > 0, ShapeError,
              "{}: input has shape {}, expected a height and width of at least 1", op, x);
  PoolGeom g{x[0],      x[1],      x[2],       x[3],       kernel[0], kernel[1],
             stride[0], stride[1], padding[0], padding[1], 0,         0};
  JANUS_CHECK(g.h + 2 * g.pad_h >= g.kh && g.w + 2 * g.pad_w >= g.kw, ShapeError,
              "{}: window {}x{} does not fit input {}x{} with padding {}x{}", op, g.kh, g.kw, g.h,
              g.w, g.pad_h, g.pad_w);
  const int64_t round_h = attrs.ceil_mode ? g.stride_h - 1 : 0;
  const int64_t round_w = attrs.ceil_mode ? g.stride_w - 1 : 0;
  g.oh = (g.h + 2 * g.pad_h - g.kh + round_h) / g.stride_h + 1;
  g.ow = (g.w + 2 * g.pad_w - g.kw + round_w) / g.stride_w + 1;
  return g;
}

void check_pool_dtype(std::string_view op, DType dtype) {
  JANUS_CHECK(dtype == DType::kFloat32 || dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", op, dtype);
}

PoolGeom check_max_pool_backward(std::string_view op, const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& dy = args.inputs[1];
  const PoolGeom g = pool_geometry(op, x.shape, PoolAttrs::from(args.attrs));
  JANUS_CHECK(dy.shape == (Shape{g.n, g.c, g.oh, g.ow}), ShapeError,
              "{}: dy has shape {}, expected {} (the pooled shape of input {})", op, dy.shape,
              Shape{g.n, g.c, g.oh, g.ow}, x.shape);
  JANUS_CHECK(dy.dtype == x.dtype, TypeError, "{}: input is {} but dy is {}, expected one dtype",
              op, x.dtype, dy.dtype);
  check_pool_dtype(op, x.dtype);
  return g;
}

void max_pool_forward(const PoolGeom& g, const NDArray& x, const NDArray& y,
                      const RunContext& ctx) {
  float_dispatch(x.dtype(), [&]<typename T>() {
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    for_each_plane(g, ctx, [&](int64_t p) {
      const T* in = xp + p * g.h * g.w;
      T* out = yp + p * g.oh * g.ow;
      if (is_2x2_stride_2(g)) {
        max_pool_2x2_plane(g, in, out);
        return;
      }
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Window win = window(g, oy, ox);
          if (win.empty()) {
            out[oy * g.ow + ox] = std::numeric_limits<T>::lowest();
            continue;
          }
          T best = in[win.y0 * g.w + win.x0];
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) best = std::max(best, in[iy * g.w + ix]);
          }
          out[oy * g.ow + ox] = best;
        }
      }
    });
  });
}

namespace {

// out[i] = relu_backward(in[i], out[i]) over a plane.
template <typename T>
JANUS_TARGET_CLONES void relu_mask_plane(const T* __restrict in, T* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = relu_masked(in[i], out[i]);
}

// max_pool_backward, and with kRelu relu's gradient and each plane's sum (plane_sums[p]).
template <bool kRelu>
void max_pool_backward_planes(const PoolGeom& g, const NDArray& x, const NDArray& dy,
                              const NDArray& dx, double* plane_sums, const RunContext& ctx) {
  float_dispatch(x.dtype(), [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    T* dxp = dx.data<T>();
    for_each_plane(g, ctx, [&](int64_t p) {
      const T* in = xp + p * g.h * g.w;
      const T* d = dyp + p * g.oh * g.ow;
      T* out = dxp + p * g.h * g.w;
      if (is_2x2_stride_2(g)) {
        max_pool_2x2_backward_plane<kRelu>(g, in, d, out);
      } else {
        std::fill(out, out + g.h * g.w, T(0));
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const Window win = window(g, oy, ox);
            if (win.empty()) continue;  // its output read no input
            int64_t arg = win.y0 * g.w + win.x0;
            for (int64_t iy = win.y0; iy < win.y1; ++iy) {
              for (int64_t ix = win.x0; ix < win.x1; ++ix) {
                if (in[iy * g.w + ix] > in[arg]) arg = iy * g.w + ix;
              }
            }
            out[arg] += d[oy * g.ow + ox];
          }
        }
        if constexpr (kRelu) relu_mask_plane(in, out, g.h * g.w);
      }
      if constexpr (kRelu) plane_sums[p] = plane_sum(out, g.h * g.w);
    });
  });
}

}  // namespace

void max_pool_backward(const PoolGeom& g, const NDArray& x, const NDArray& dy, const NDArray& dx,
                       const RunContext& ctx) {
  max_pool_backward_planes<false>(g, x, dy, dx, nullptr, ctx);
}

void max_pool_relu_backward(const PoolGeom& g, const NDArray& x, const NDArray& dy,
                            const NDArray& dx, double* plane_sums, const RunContext& ctx) {
  max_pool_backward_planes<true>(g, x, dy, dx, plane_sums, ctx);
}

template <typename T>
void avg_pool_2x2_rows(const T* in, int64_t row_stride, T* out, int64_t oh, int64_t ow) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (simd::has_avx512f()) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const float* r0 = in + 2 * oy * row_stride;
        avg_pool_2x2_row_avx512(r0, r0 + row_stride, out + oy * ow, ow);
      }
      return;
    }
  }
#endif
  for (int64_t oy = 0; oy < oh; ++oy) {
    const T* r0 = in + 2 * oy * row_stride;
    avg_pool_2x2_row(r0, r0 + row_stride, out + oy * ow, ow);
  }
}
template void avg_pool_2x2_rows(const float*, int64_t, float*, int64_t, int64_t);
template void avg_pool_2x2_rows(const double*, int64_t, double*, int64_t, int64_t);

void avg_pool_2x2_channels_last(const float* in, int64_t w, int64_t c, float* out, int64_t oh,
                                int64_t ow) {
  avg_pool_2x2_channels_last_image(in, w, c, out, oh, ow);
}

void avg_pool_forward(const PoolGeom& g, bool count_pad, const NDArray& x, const NDArray& y,
                      const RunContext& ctx) {
  float_dispatch(x.dtype(), [&]<typename T>() {
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    for_each_plane(g, ctx, [&](int64_t p) {
      const T* in = xp + p * g.h * g.w;
      T* out = yp + p * g.oh * g.ow;
      if (is_2x2_stride_2(g)) {  // no padding: every window has 4 taps
        avg_pool_2x2_rows(in, g.w, out, g.oh, g.ow);
        return;
      }
      // Rows of at least 8 windows: shorter ones (global pooling's single window) would pay a
      // call per tap for a loop too short to vectorize.
      if (windows_inside(g) && g.ow >= 8) {
        avg_pool_unpadded_plane(g, in, out);
        return;
      }
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Window win = window(g, oy, ox);
          if (win.empty()) {
            out[oy * g.ow + ox] = T(0);
            continue;
          }
          T total = 0;
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) total += in[iy * g.w + ix];
          }
          const int64_t n = count_pad ? win.padded_count : win.taps();
          out[oy * g.ow + ox] = total / static_cast<T>(n);
        }
      }
    });
  });
}

void avg_pool_backward(const PoolGeom& g, bool count_pad, const NDArray& dy, const NDArray& dx,
                       const RunContext& ctx) {
  float_dispatch(dy.dtype(), [&]<typename T>() {
    const T* dyp = dy.data<T>();
    T* dxp = dx.data<T>();
    for_each_plane(g, ctx, [&](int64_t p) {
      const T* d = dyp + p * g.oh * g.ow;
      T* out = dxp + p * g.h * g.w;
      if (is_2x2_stride_2(g)) {
        if (g.h % 2 != 0 || g.w % 2 != 0) std::fill(out, out + g.h * g.w, T(0));  // unread taps
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          T* o0 = out + 2 * oy * g.w;
          avg_pool_2x2_backward_row(d + oy * g.ow, o0, o0 + g.w, g.ow);
        }
        return;
      }
      std::fill(out, out + g.h * g.w, T(0));
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const Window win = window(g, oy, ox);
          if (win.empty()) continue;
          const int64_t n = count_pad ? win.padded_count : win.taps();
          const T share = d[oy * g.ow + ox] / static_cast<T>(n);
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) out[iy * g.w + ix] += share;
          }
        }
      }
    });
  });
}

}  // namespace janus::ops
