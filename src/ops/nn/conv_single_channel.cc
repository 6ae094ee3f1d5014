// The convolution of one input channel (a network's grayscale input) into fewer output channels
// than one AVX-512 vector holds, stride and dilation 1, float32: the forward pass and the weight
// gradient. oneDNN's kernels vectorize along the output channels, a handful here (LeNet's first
// layer: 6 of 16 lanes busy), and compute channels-last, which costs a conversion of the whole
// output (forward) or of dy (weight gradient) from or to NCHW every call. These kernels
// vectorize along the output rows instead and read and write NCHW directly.
//
// Each image is copied once into a zero-padded plane of width pw = iw + 2 * pad_w. On it, output
// (oy, ox) reads tap (ky, kx) at (oy + ky) * pw + ox + kx: with the output laid out on rows of
// the padded width ("wide" rows, whose last kw - 1 entries are unused), every tap is one offset
// from the output's index, so a run of consecutive wide outputs accumulates each tap with one
// contiguous load, in registers, and feeds up to kGroup output channels at once (their taps are
// scalars broadcast from memory). Every output is (bias + its even taps) + (its odd taps), each
// sum in the kernel's row-major order, whatever the vector width. The activation (post_op.h)
// runs on each image's outputs right after they are written; a fused 2x2 average pooling reads
// them from the wide rows, so that only the pooled planes reach y (LeNet's first layer: 0.3 MB
// instead of 1.2 MB written, and not read back by a pooling call).
//
// The weight gradient dw[o, ky, kx] = sum over n, oy, ox of dy[n, o, oy, ox] * x_n[oy + ky - ph,
// ox + kx - pw_pad] reads the same padded planes (their rows padded on the right so that a run
// of kRun outputs starting in any output row stays inside its plane), and dy where it lies
// (NCHW): a run of one dy row is multiplied with the plane at each tap's offset, into one
// accumulator per channel and tap, a few channels and taps per pass over the images. The lanes
// of a row's last, partial run that lie past the row are masked out of the products, so only
// in-range outputs add, as in the direct loops. Each lane sums its products image by image, row
// by row; the lanes are then added in order: one order whatever the number of threads. Written
// for AVX-512 alone (where the CPU lacks it, oneDNN computes the gradient).
#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "janus/base/error.h"

#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "conv.h"
#include "pool.h"
#include "post_op.h"

namespace janus::ops {
namespace {

// The lanes of one AVX-512 vector: with as many output channels, oneDNN fills its vectors.
constexpr int64_t kLanes = 16;
// Wide outputs computed together, their accumulators in registers (one AVX-512 vector, two AVX2
// ones) twice: the even and the odd taps add into separate ones, two chains of additions that
// overlap. Tried and slower: runs of 32 or 64 (the accumulators went through the stack), and one
// pass over all outputs per tap (GCC left that loop scalar).
constexpr int64_t kRun = 16;
// Output channels computed in one pass over the plane: each loaded run of inputs feeds this many
// channels' taps, so a pass costs one vector load per tap and kGroup multiply-adds instead of one
// of each (12 AVX-512 accumulators; the AVX2 clone spills some).
constexpr int kGroup = 6;

// kRun floats, one AVX-512 register (two AVX2 ones): written as a vector type because GCC's
// vectorizer turned the loops over a group's channels into shuffles through the stack.
using Run = float __attribute__((vector_size(kRun * sizeof(float))));

// For the G output channels g < G: wide[g * count + i] = bias[g] + sum over t of
// taps[g * ntaps + t] * plane[offsets[t] + i], for i < count (a multiple of kRun); plane holds
// count + the largest offset floats. Per output the sums are those of one channel at a time.
template <int G>
JANUS_TARGET_CLONES void wide_outputs(const float* __restrict plane,
                                      const int64_t* __restrict offsets,
                                      const float* __restrict taps, int64_t ntaps,
                                      const float* __restrict bias, float* __restrict wide,
                                      int64_t count) {
  for (int64_t i = 0; i < count; i += kRun) {
    Run even[G], odd[G];
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      even[g] = Run{} + bias[g];
      odd[g] = Run{};
    }
    int64_t t = 0;
    for (; t + 1 < ntaps; t += 2) {
      Run s0, s1;
      std::memcpy(&s0, plane + offsets[t] + i, sizeof s0);
      std::memcpy(&s1, plane + offsets[t + 1] + i, sizeof s1);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        even[g] += taps[g * ntaps + t] * s0;
        odd[g] += taps[g * ntaps + t + 1] * s1;
      }
    }
    if (t < ntaps) {
      Run src;
      std::memcpy(&src, plane + offsets[t] + i, sizeof src);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) even[g] += taps[g * ntaps + t] * src;
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const Run sum = even[g] + odd[g];
      std::memcpy(wide + g * count + i, &sum, sizeof sum);
    }
  }
}

using WideOutputs = void (*)(const float*, const int64_t*, const float*, int64_t, const float*,
                             float*, int64_t);

// wide_outputs<g> for 1 <= g <= kGroup.
WideOutputs wide_outputs_of(int64_t g) {
  static constexpr WideOutputs kByGroup[] = {wide_outputs<1>, wide_outputs<2>, wide_outputs<3>,
                                             wide_outputs<4>, wide_outputs<5>, wide_outputs<6>};
  static_assert(std::size(kByGroup) == kGroup);
  return kByGroup[g - 1];
}

// dst[r * ow + i] = src[r * pw + i] for r < rows, i < ow (pw >= ow). Each row but the last is
// copied in whole runs of kRun floats, the last run reaching past the row's end into the next
// row, which is written after it: a run is one vector load and store, where a copy of each row
// through memmove costs a call per row (28 rows per image and channel on LeNet's first layer).
// With ow >= kRun a run reaches no further than the next row. src holds kRun - 1 floats past its
// last row. The last row, whose next one belongs to another plane (possibly another thread's),
// is copied exactly, as are the rows narrower than a run.
JANUS_TARGET_CLONES void copy_rows(const float* src, int64_t pw, float* dst, int64_t ow,
                                   int64_t rows) {
  if (ow < kRun) {
    for (int64_t r = 0; r < rows; ++r) std::copy_n(src + r * pw, ow, dst + r * ow);
    return;
  }
  for (int64_t r = 0; r + 1 < rows; ++r) {
    for (int64_t i = 0; i < ow; i += kRun) {
      Run v;
      std::memcpy(&v, src + r * pw + i, sizeof v);
      std::memcpy(dst + r * ow + i, &v, sizeof v);
    }
  }
  std::copy_n(src + (rows - 1) * pw, ow, dst + (rows - 1) * ow);
}

// plane[r * pitch + c] = the image x [ih, iw] zero-padded by ph rows above and pad_w columns on
// the left, for r < rows (rows - ih - ph zero rows below), c < pitch (pitch - iw - pad_w zero
// columns on the right).
void pad_image(const float* x, int64_t ih, int64_t iw, int64_t ph, int64_t pad_w, int64_t pitch,
               int64_t rows, float* plane) {
  std::fill(plane, plane + rows * pitch, 0.0f);
  for (int64_t r = 0; r < ih; ++r) std::copy_n(x + r * iw, iw, plane + (r + ph) * pitch + pad_w);
}

#if defined(__x86_64__)
// One pass of tap_gradients accumulates kChannelGroup output channels' gradients at up to
// kTapGroup taps, kChannelGroup x kTapGroup accumulators in AVX-512 registers: each loaded run
// of the plane feeds every channel of the group, and each loaded run of dy every tap. A load of
// the plane at a tap's offset is unaligned (it mostly spans two cache lines), and the loads, not
// the arithmetic, bound the kernel: each must feed several multiply-adds.
constexpr int kChannelGroup = 3;
constexpr int kTapGroup = 8;

// Makes the compiler hold v in a register from here on: the multiplications by one loaded run of
// the plane would otherwise each load it again (GCC folds the load into every multiply).
__attribute__((target("avx512f"), always_inline)) inline void keep_in_register(Run& v) {
  asm("" : "+v"(v));
}

// The bits of kRun floats, to mask lanes out of a product.
using RunBits = int32_t __attribute__((vector_size(kRun * sizeof(float))));

// acc[g][t] += dv[g] * x[offsets[t] + lane] for each lane, and with kMasked only in the lanes
// that `keep` sets.
template <int G, int T, bool kMasked>
__attribute__((target("avx512f"), always_inline)) inline void add_products(
    Run (&acc)[G][T], const Run (&dv)[G], const float* x, const int64_t* offsets, RunBits keep) {
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    Run s;
    std::memcpy(&s, x + offsets[t], sizeof s);
    keep_in_register(s);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      if constexpr (kMasked) {
        acc[g][t] += (Run)((RunBits)(dv[g] * s) & keep);
      } else {
        acc[g][t] += dv[g] * s;
      }
    }
  }
}

// For the G channels g < G and T taps t < T: dw[g * dw_stride + t] = sum over images i < n,
// rows oy < oh, ox < ow of dy[i * image_stride + g * oh * ow + oy * ow + ox] *
// planes[i * plane_size + oy * pitch + ox + offsets[t]]. A run reads kRun floats of dy and of the
// plane; dy's are read up to dy_end, the plane's stay inside it (its rows reach kRun - 1 floats
// past the last run's start plus the largest offset).
template <int G, int T>
__attribute__((target("avx512f"))) void tap_gradients(const float* __restrict planes,
                                                      int64_t plane_size, int64_t pitch,
                                                      const int64_t* __restrict offsets,
                                                      const float* __restrict dy,
                                                      const float* dy_end, int64_t image_stride,
                                                      int64_t n, int64_t oh, int64_t ow,
                                                      float* __restrict dw, int64_t dw_stride) {
  const int64_t full = ow / kRun * kRun;  // the outputs of each row in whole runs
  const int64_t rest = ow - full;
  RunBits keep{};  // the lanes of the last run that lie in the row
  for (int64_t l = 0; l < rest; ++l) keep[l] = -1;
  Run acc[G][T];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[g][t] = Run{};
  }
  const int64_t plane_rows = oh * ow;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      const float* d = dy + i * image_stride + oy * ow;
      const float* x = planes + i * plane_size + oy * pitch;
      for (int64_t ox = 0; ox < full; ox += kRun) {
        Run dv[G];
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) std::memcpy(&dv[g], d + g * plane_rows + ox, sizeof(Run));
        add_products<G, T, false>(acc, dv, x + ox, offsets, keep);
      }
      if (rest > 0) {
        // The lanes past the row are masked out of the products: what they load is irrelevant,
        // but a load must stay inside dy (the array's last row is copied instead).
        Run dv[G];
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
          const float* dg = d + g * plane_rows + full;
          if (dg + kRun <= dy_end) {
            std::memcpy(&dv[g], dg, sizeof(Run));
          } else {
            dv[g] = Run{};
            for (int64_t l = 0; l < rest; ++l) dv[g][l] = dg[l];
          }
        }
        add_products<G, T, true>(acc, dv, x + full, offsets, keep);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int t = 0; t < T; ++t) {
      float total = 0;
      for (int64_t l = 0; l < kRun; ++l) total += acc[g][t][l];
      dw[g * dw_stride + t] = total;
    }
  }
}

using TapGradients = void (*)(const float*, int64_t, int64_t, const int64_t*, const float*,
                              const float*, int64_t, int64_t, int64_t, int64_t, float*, int64_t);

// tap_gradients<g, t> for 1 <= g <= kChannelGroup, 1 <= t <= kTapGroup.
template <int G, size_t... Ts>
constexpr std::array<TapGradients, kTapGroup> tap_gradients_row(std::index_sequence<Ts...>) {
  return {tap_gradients<G, static_cast<int>(Ts) + 1>...};
}
TapGradients tap_gradients_of(int64_t g, int64_t t) {
  static constexpr std::array<std::array<TapGradients, kTapGroup>, kChannelGroup> kByCount = {
      tap_gradients_row<1>(std::make_index_sequence<kTapGroup>()),
      tap_gradients_row<2>(std::make_index_sequence<kTapGroup>()),
      tap_gradients_row<3>(std::make_index_sequence<kTapGroup>())};
  return kByCount[static_cast<size_t>(g - 1)][static_cast<size_t>(t - 1)];
}
#endif

}  // namespace

bool conv_single_channel_applies(const ConvGeom& g) {
  return g.dims == 2 && g.c == 1 && g.groups == 1 && g.o < kLanes && g.stride[1] == 1 &&
         g.stride[2] == 1 && g.dil[1] == 1 && g.dil[2] == 1 && g.n > 0 && g.o > 0 &&
         g.out_size() > 0;
}

bool conv_single_channel_backward_weight_applies(const ConvGeom& g) {
#if defined(__x86_64__)
  return conv_single_channel_applies(g) && simd::has_avx512f();
#else
  return false;
#endif
}

void conv_single_channel(const ConvGeom& g, const float* x, const float* weight, const float* bias,
                         float* y, const RunContext& ctx) {
  const int64_t ih = g.in[1], iw = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t oh = g.out[1], ow = g.out[2], ph = g.pad[1], pw_pad = g.pad[2];
  const int64_t pw = iw + 2 * pw_pad;
  const int64_t count = (oh * pw + kRun - 1) / kRun * kRun;
  std::vector<int64_t> offsets;
  for (int64_t ky = 0; ky < kh; ++ky) {
    for (int64_t kx = 0; kx < kw; ++kx) offsets.push_back(ky * pw + kx);
  }
  const int64_t ntaps = kh * kw;
  const int64_t plane_size = count + offsets.back();
  const int64_t pooled_plane = (oh / 2) * (ow / 2);
  parallel_for(
      g.n, ctx,
      [&](int64_t lo, int64_t hi) {
        std::vector<float> plane(static_cast<size_t>(plane_size));
        std::vector<float> wide(static_cast<size_t>(kGroup * count + kRun));
        for (int64_t n = lo; n < hi; ++n) {
          // Past the padded image (plane_size >= (ih + 2 * ph) * pw) the plane is zeros too.
          pad_image(x + n * ih * iw, ih, iw, ph, pw_pad, pw, ih + 2 * ph, plane.data());
          std::fill(plane.begin() + (ih + 2 * ph) * pw, plane.end(), 0.0f);
          for (int64_t oc0 = 0; oc0 < g.o; oc0 += kGroup) {
            const int64_t group = std::min<int64_t>(kGroup, g.o - oc0);
            wide_outputs_of(group)(plane.data(), offsets.data(), weight + oc0 * ntaps, ntaps,
                                   bias + oc0, wide.data(), count);
            if (g.avg_pool_2x2) {
              // Activated and pooled from the wide rows, in cache; y gets the pooled planes
              // only. The wide rows' unused entries are activated too (one call per channel
              // instead of one per row) and read by no window.
              post_op_block(g.activation, wide.data(), group * count);
              for (int64_t k = 0; k < group; ++k) {
                avg_pool_2x2_rows(wide.data() + k * count, pw,
                                  y + (n * g.o + oc0 + k) * pooled_plane, oh / 2, ow / 2);
              }
              continue;
            }
            for (int64_t k = 0; k < group; ++k) {
              copy_rows(wide.data() + k * count, pw, y + (n * g.o + oc0 + k) * oh * ow, ow, oh);
            }
          }
          if (g.avg_pool_2x2) continue;
          // The image's outputs are still in cache (LeNet's first layer: 18 KiB).
          post_op_block(g.activation, y + n * g.o * oh * ow, g.o * oh * ow);
        }
      },
      g.o * g.out_size() * g.k_size());
}

}  // namespace janus::ops

namespace janus::ops {

#if defined(__x86_64__)
void conv_single_channel_backward_weight(const ConvGeom& g, const float* x, const float* dy,
                                         float* dweight, const RunContext& ctx) {
  const int64_t ih = g.in[1], iw = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t oh = g.out[1], ow = g.out[2], ph = g.pad[1], pad_w = g.pad[2];
  // A run starting in any output row reads up to kRun - 1 floats past its start plus kw - 1.
  const int64_t pitch = (ow + kRun - 1) / kRun * kRun + kw - 1;
  const int64_t rows = ih + 2 * ph;  // = oh + kh - 1: every tap's row exists
  const int64_t plane_size = rows * pitch;
  thread_local std::vector<float> planes;
  planes.resize(static_cast<size_t>(g.n * plane_size));
  float* const p = planes.data();
  parallel_for(
      g.n, ctx,
      [&](int64_t lo, int64_t hi) {
        for (int64_t n = lo; n < hi; ++n)
          pad_image(x + n * ih * iw, ih, iw, ph, pad_w, pitch, rows, p + n * plane_size);
      },
      plane_size);
  std::vector<int64_t> offsets;
  for (int64_t ky = 0; ky < kh; ++ky) {
    for (int64_t kx = 0; kx < kw; ++kx) offsets.push_back(ky * pitch + kx);
  }
  // The channels in groups of at most kChannelGroup and the taps in groups of at most
  // kTapGroup, each as even as possible (LeNet's 6 channels: 3 and 3; 25 taps: 6, 6, 6 and 7);
  // one work item per pair of groups, so that no sum depends on the threads.
  const int64_t ntaps = kh * kw;
  const int64_t cgroups = (g.o + kChannelGroup - 1) / kChannelGroup;
  const int64_t tgroups = (ntaps + kTapGroup - 1) / kTapGroup;
  const float* const dy_end = dy + g.n * g.o * oh * ow;
  parallel_for(
      cgroups * tgroups, ctx,
      [&](int64_t lo, int64_t hi) {
        for (int64_t item = lo; item < hi; ++item) {
          const int64_t c = item / tgroups, k = item % tgroups;
          const int64_t o0 = c * g.o / cgroups, o1 = (c + 1) * g.o / cgroups;
          const int64_t t0 = k * ntaps / tgroups, t1 = (k + 1) * ntaps / tgroups;
          tap_gradients_of(o1 - o0, t1 - t0)(p, plane_size, pitch, offsets.data() + t0,
                                             dy + o0 * oh * ow, dy_end, g.o * oh * ow, g.n, oh, ow,
                                             dweight + o0 * ntaps + t0, ntaps);
        }
      },
      g.n * g.out_size() * kChannelGroup * kTapGroup);
}
#else
void conv_single_channel_backward_weight(const ConvGeom&, const float*, const float*, float*,
                                         const RunContext&) {
  JANUS_THROW(InternalError, "conv_single_channel_backward_weight: needs AVX-512F");
}
#endif

}  // namespace janus::ops
