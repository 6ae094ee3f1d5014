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
// contiguous load, in registers. Every output is (bias + its even taps) + (its odd taps), each
// sum in the kernel's row-major order, whatever the vector width.
#include <algorithm>
#include <vector>

#include "../elementwise/simd_loop.h"
#include "../op_utils.h"
#include "conv.h"

namespace janus::ops {
namespace {

// The lanes of one AVX-512 vector: with as many output channels, oneDNN fills its vectors.
constexpr int64_t kLanes = 16;
// Wide outputs computed together, their accumulators in registers (one AVX-512 vector, two AVX2
// ones) twice: the even and the odd taps add into separate ones, two chains of additions that
// overlap. Tried and slower: runs of 32 or 64 (the accumulators went through the stack), and one
// pass over all outputs per tap (GCC left that loop scalar).
constexpr int64_t kRun = 16;

// out[i] = bias + sum over t of taps[t] * plane[offsets[t] + i], for i < count (a multiple of
// kRun); plane holds count + the largest offset floats.
JANUS_TARGET_CLONES void wide_outputs(const float* __restrict plane,
                                      const int64_t* __restrict offsets,
                                      const float* __restrict taps, int64_t ntaps, float bias,
                                      float* __restrict out, int64_t count) {
  for (int64_t i = 0; i < count; i += kRun) {
    float even[kRun], odd[kRun];
    for (int64_t j = 0; j < kRun; ++j) {
      even[j] = bias;
      odd[j] = 0.0f;
    }
    int64_t t = 0;
    for (; t + 1 < ntaps; t += 2) {
      const float w0 = taps[t], w1 = taps[t + 1];
      const float* s0 = plane + offsets[t] + i;
      const float* s1 = plane + offsets[t + 1] + i;
      for (int64_t j = 0; j < kRun; ++j) {
        even[j] += w0 * s0[j];
        odd[j] += w1 * s1[j];
      }
    }
    if (t < ntaps) {
      const float w = taps[t];
      const float* src = plane + offsets[t] + i;
      for (int64_t j = 0; j < kRun; ++j) even[j] += w * src[j];
    }
    for (int64_t j = 0; j < kRun; ++j) out[i + j] = even[j] + odd[j];
  }
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
  parallel_for(
      g.n, ctx,
      [&](int64_t lo, int64_t hi) {
        std::vector<float> plane(static_cast<size_t>(plane_size));
        std::vector<float> wide(static_cast<size_t>(count));
        for (int64_t n = lo; n < hi; ++n) {
          // Rows outside [ph, ph + ih) and the columns of the padding stay 0.
          std::fill(plane.begin(), plane.end(), 0.0f);
          for (int64_t r = 0; r < ih; ++r) {
            std::copy_n(x + (n * ih + r) * iw, iw, plane.data() + (r + ph) * pw + pw_pad);
          }
          for (int64_t oc = 0; oc < g.o; ++oc) {
            wide_outputs(plane.data(), offsets.data(), weight + oc * ntaps, ntaps, bias[oc],
                         wide.data(), count);
            float* out = y + (n * g.o + oc) * oh * ow;
            for (int64_t oy = 0; oy < oh; ++oy) {
              std::copy_n(wide.data() + oy * pw, ow, out + oy * ow);
            }
          }
        }
      },
      g.o * g.out_size() * g.k_size());
}

}  // namespace janus::ops
