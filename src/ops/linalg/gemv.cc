// gemv_bias: the batch-1 fully_connected product (gemv.h).
#include "gemv.h"

#include <cstring>

#include "../elementwise/relu_rule.h"
#include "../elementwise/simd_loop.h"

// GCC notes that passing 64-byte vectors by value changes the ABI between instruction sets; the
// functions that do so are internal to this file and inlined, so no interface is affected.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace janus::ops {
namespace {

constexpr int kLanes = 16;
// 16 floats as one value: GCC lowers its lane-wise operations to whatever vectors the clone's
// instruction set has (one zmm, two ymm, four xmm), always as separate IEEE multiplies and adds
// (-ffp-contract=off), so every clone computes the same sums.
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

typedef float Lanes8 __attribute__((vector_size(8 * sizeof(float))));
typedef float Lanes4 __attribute__((vector_size(4 * sizeof(float))));

// The row's 16 partial sums combined pairwise (lane l with l + 8, then + 4, + 2, + 1), then the
// tail p in [kv, k) in order, then the bias.
inline float finish(Lanes acc, const float* x, const float* row, int64_t kv, int64_t k,
                    float bias) {
  const Lanes8 a8 = __builtin_shufflevector(acc, acc, 0, 1, 2, 3, 4, 5, 6, 7) +
                    __builtin_shufflevector(acc, acc, 8, 9, 10, 11, 12, 13, 14, 15);
  const Lanes4 a4 =
      __builtin_shufflevector(a8, a8, 0, 1, 2, 3) + __builtin_shufflevector(a8, a8, 4, 5, 6, 7);
  float sum = (a4[0] + a4[2]) + (a4[1] + a4[3]);
  for (int64_t p = kv; p < k; ++p) sum += row[p] * x[p];
  return sum + bias;
}

// Four rows at a time share each load of x and give four independent chains of additions.
JANUS_TARGET_CLONES void gemv_loop(const float* __restrict x, const float* __restrict w,
                                   const float* __restrict b, float* __restrict y, int64_t k,
                                   int64_t m) {
  const int64_t kv = k / kLanes * kLanes;
  int64_t j = 0;
  for (; j + 4 <= m; j += 4) {
    const float* r0 = w + j * k;
    const float* r1 = r0 + k;
    const float* r2 = r1 + k;
    const float* r3 = r2 + k;
    Lanes a0{}, a1{}, a2{}, a3{};
    for (int64_t p = 0; p < kv; p += kLanes) {
      const Lanes xv = load(x + p);
      a0 += load(r0 + p) * xv;
      a1 += load(r1 + p) * xv;
      a2 += load(r2 + p) * xv;
      a3 += load(r3 + p) * xv;
    }
    y[j] = finish(a0, x, r0, kv, k, b[j]);
    y[j + 1] = finish(a1, x, r1, kv, k, b[j + 1]);
    y[j + 2] = finish(a2, x, r2, kv, k, b[j + 2]);
    y[j + 3] = finish(a3, x, r3, kv, k, b[j + 3]);
  }
  for (; j < m; ++j) {
    const float* r = w + j * k;
    Lanes a{};
    for (int64_t p = 0; p < kv; p += kLanes) a += load(r + p) * load(x + p);
    y[j] = finish(a, x, r, kv, k, b[j]);
  }
}

}  // namespace

void gemv_bias(const float* x, const float* w, const float* b, float* y, int64_t k, int64_t m,
               bool relu) {
  gemv_loop(x, w, b, y, k, m);
  if (relu) {
    for (int64_t j = 0; j < m; ++j) y[j] = relu_value(y[j]);
  }
}

}  // namespace janus::ops
