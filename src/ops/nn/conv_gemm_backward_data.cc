// The data gradient of a 2-D convolution into few input channels (fewer than one AVX-512 vector
// holds), stride and dilation 1, one group, float32, as a matrix product and a column-to-image
// sum. oneDNN's backward-data kernels vectorize along the input channels, a handful here
// (LeNet's second layer: 6 of 16 lanes, so its rate is a fraction of the forward pass's),
// and compute channels-last, which costs a conversion of dy and of dx every call.
//
// cols[n, (c, ky, kx), (oy, ox)] = sum over o of weight[o, (c, ky, kx)] * dy[n, o, (oy, ox)]:
// one batched oneDNN matmul (weight read in place, transposed; dy in place, NCHW; the product's
// rows are the taps of every input channel, 150 on LeNet's), a chunk of images at a time so
// that the columns stay within kColumnsBytes. Then dx[n, c, y, x] = sum over
// (ky, kx) of cols[n, (c, ky, kx), (y - ky + ph, x - kx + pw)] where that output exists: for
// each run of 16 columns of a dx row, the taps' runs of cols are added in registers (masked
// loads keep out the positions past an edge) and the run is stored once, NCHW. Each dx element
// adds its taps in the kernel's row-major order. Written for AVX-512 alone (where the CPU lacks
// it, oneDNN computes the gradient).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "conv.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "janus/base/error.h"

#include "../elementwise/simd_loop.h"
#include "../linalg/onednn.h"
#include "../linalg/primitive_cache.h"
#include "../op_utils.h"

namespace janus::ops {
namespace {

constexpr int64_t kLanes = 16;

using dt = dnnl::memory::data_type;

// The matmul of one geometry (a value of the primitive cache).
struct ColumnsProduct {
  explicit ColumnsProduct(const ConvGeom& g) {
    const int64_t taps = g.c * g.k_size(), outputs = g.out_size();
    // weight [o, taps] read as its transpose [taps, o]; one matrix for every image.
    weight = dnnl::memory::desc({1, taps, g.o}, dt::f32, dnnl::memory::dims{taps * g.o, 1, taps});
    dy = dnnl::memory::desc({g.n, g.o, outputs}, dt::f32, dnnl::memory::format_tag::abc);
    cols = dnnl::memory::desc({g.n, taps, outputs}, dt::f32, dnnl::memory::format_tag::abc);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(weight, dy, cols), onednn_attr(),
                                          onednn_engine());
    prim = dnnl::matmul(pd);
    scratchpad = pd.scratchpad_desc();
    impl_name = pd.impl_info_str();
  }
  std::string impl() const { return impl_name; }

  dnnl::matmul prim;
  mutable std::atomic<bool> ran{false};  // settle_after_first_run
  dnnl::memory::desc weight, dy, cols, scratchpad;
  std::string impl_name;
};

// cols = the product above, into `out` (g.n * taps * outputs floats).
void columns(const ColumnsProduct& p, const float* dy, const float* weight, float* out) {
  dnnl::engine& eng = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  p.prim.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(p.weight, eng, const_cast<float*>(weight))},
                          {DNNL_ARG_WEIGHTS, dnnl::memory(p.dy, eng, const_cast<float*>(dy))},
                          {DNNL_ARG_DST, dnnl::memory(p.cols, eng, out)},
                          {DNNL_ARG_SCRATCHPAD, onednn_scratchpad(p.scratchpad)}});
  stream.wait();
  settle_after_first_run(p.ran);
}

// The columns of at most this many bytes exist at once: a large batch of large images goes
// through in chunks of images (LeNet's second layer at batch 64: 3.75 MiB, one chunk).
constexpr int64_t kColumnsBytes = int64_t{4} << 20;

// The images of one chunk: the batch cut into as few equal chunks (the last one shorter) as
// keep each chunk's columns within kColumnsBytes, at least one image each.
int64_t chunk_images(const ConvGeom& g) {
  const int64_t per_image = g.c * g.k_size() * g.out_size() * static_cast<int64_t>(sizeof(float));
  const int64_t chunks =
      std::max<int64_t>(1, (g.n * per_image + kColumnsBytes - 1) / kColumnsBytes);
  return std::max<int64_t>(1, (g.n + chunks - 1) / chunks);
}

// g with `images` images.
ConvGeom with_images(ConvGeom g, int64_t images) {
  g.n = images;
  return g;
}

const ColumnsProduct& cached_product(const ConvGeom& g) {
  return primitive_cache<ConvGeom, ColumnsProduct>().get(g, [&g](const ColumnsProduct& probe) {
    const int64_t taps = g.c * g.k_size(), outputs = g.out_size();
    std::vector<float> dy(static_cast<size_t>(g.n * g.o * outputs)),
        w(static_cast<size_t>(g.o * taps)), cols(static_cast<size_t>(g.n * taps * outputs));
    columns(probe, dy.data(), w.data(), cols.data());
  });
}

#if defined(__x86_64__)
// The lanes l < 16 with lo <= l < hi.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, kLanes);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((uint32_t{1} << hi) - 1) & ~((uint32_t{1} << lo) - 1));
}

// The lanes of each run of 16 dx columns (x0 = 16 * run) that tap column kx reads from cols, at
// [run * kw + kx]: x = x0 + l reads output column x - kx + pw, which must exist (and x < iw).
std::vector<__mmask16> tap_lanes(const ConvGeom& g) {
  const int64_t iw = g.in[2], kw = g.k[2], ow = g.out[2], pw = g.pad[2];
  std::vector<__mmask16> masks;
  for (int64_t x0 = 0; x0 < iw; x0 += kLanes) {
    for (int64_t kx = 0; kx < kw; ++kx) {
      const int64_t q0 = x0 - kx + pw;
      masks.push_back(lanes(-q0, std::min(ow - q0, iw - x0)));
    }
  }
  return masks;
}

// dx [ih, iw] of one image and channel from its taps' planes of cols (kh * kw planes of oh * ow
// each, in tap order); `masks` from tap_lanes.
__attribute__((target("avx512f"))) void columns_to_image(const ConvGeom& g, const __mmask16* masks,
                                                         const float* cols, float* dx) {
  const int64_t ih = g.in[1], iw = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t oh = g.out[1], ow = g.out[2], ph = g.pad[1], pw = g.pad[2];
  const int64_t outputs = oh * ow;
  for (int64_t y = 0; y < ih; ++y) {
    // The kernel rows whose output row oy = y - ky + ph exists.
    const int64_t ky0 = std::max<int64_t>(0, y + ph - oh + 1), ky1 = std::min(kh, y + ph + 1);
    for (int64_t x0 = 0, run = 0; x0 < iw; x0 += kLanes, ++run) {
      const __mmask16* m = masks + run * kw;
      __m512 acc = _mm512_setzero_ps();
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        // Tap (ky, kx)'s plane at output (y - ky + ph, x0 - kx + pw): kx planes on, kx back.
        const float* at = cols + ky * kw * outputs + (y - ky + ph) * ow + x0 + pw;
        for (int64_t kx = 0; kx < kw; ++kx) {
          acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m[kx], at + kx * (outputs - 1)));
        }
      }
      _mm512_mask_storeu_ps(dx + y * iw + x0, lanes(0, iw - x0), acc);
    }
  }
}
#endif

}  // namespace

bool conv_gemm_backward_data_applies(const ConvGeom& g) {
#if defined(__x86_64__)
  return g.dims == 2 && g.groups == 1 && g.c < kLanes && g.stride[1] == 1 && g.stride[2] == 1 &&
         g.dil[1] == 1 && g.dil[2] == 1 && g.n > 0 && g.c > 0 && g.o > 0 && g.out_size() > 0 &&
         simd::has_avx512f();
#else
  return false;
#endif
}

void prepare_conv_gemm_backward_data(const ConvGeom& g) {
  const int64_t chunk = chunk_images(g);
  cached_product(with_images(g, chunk));
  if (g.n % chunk != 0) cached_product(with_images(g, g.n % chunk));
}

void conv_gemm_backward_data(const ConvGeom& g, const float* dy, const float* weight, float* dx,
                             const RunContext& ctx) {
#if defined(__x86_64__)
  const int64_t outputs = g.out_size(), plane = g.in_size();
  const int64_t per_channel = g.k_size() * outputs;  // the columns of one image and channel
  const int64_t chunk = chunk_images(g);
  thread_local std::vector<float> cols;
  cols.resize(static_cast<size_t>(chunk * g.c * per_channel));
  const float* const c = cols.data();
  const std::vector<__mmask16> masks = tap_lanes(g);
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t images = std::min(chunk, g.n - n0);
    columns(cached_product(with_images(g, images)), dy + n0 * g.o * outputs, weight, cols.data());
    float* const out = dx + n0 * g.c * plane;
    parallel_for(
        images * g.c, ctx,
        [&](int64_t lo, int64_t hi) {
          for (int64_t p = lo; p < hi; ++p)
            columns_to_image(g, masks.data(), c + p * per_channel, out + p * plane);
        },
        plane * g.k_size());
  }
#else
  JANUS_THROW(InternalError, "conv_gemm_backward_data: needs AVX-512F");
#endif
}

}  // namespace janus::ops
