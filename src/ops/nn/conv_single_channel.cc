// The forward convolution of one input channel (a network's grayscale input) into fewer output
// channels than one AVX-512 vector holds, stride and dilation 1, float32. oneDNN's kernels
// vectorize along the output channels, a handful here (LeNet's first layer: 6 of 16 lanes, about
// 27 GFLOP/s), and compute channels-last, which costs a conversion of the whole output to NCHW
// every call (a quarter of the convolution's time on LeNet's at batch 64). This kernel vectorizes
// along the output rows instead and writes NCHW directly.
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
#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

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

}  // namespace

bool conv_single_channel_applies(const ConvGeom& g) {
  return g.dims == 2 && g.c == 1 && g.groups == 1 && g.o < kLanes && g.stride[1] == 1 &&
         g.stride[2] == 1 && g.dil[1] == 1 && g.dil[2] == 1 && g.n > 0 && g.o > 0 &&
         g.out_size() > 0;
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
          // Rows outside [ph, ph + ih) and the columns of the padding stay 0.
          std::fill(plane.begin(), plane.end(), 0.0f);
          for (int64_t r = 0; r < ih; ++r) {
            std::copy_n(x + (n * ih + r) * iw, iw, plane.data() + (r + ph) * pw + pw_pad);
          }
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
