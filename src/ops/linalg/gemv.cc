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

// A row's 16 partial sums: 32 over p < k rounded down to 32 (two vectors, so that two chains of
// additions are in flight), their two halves added lane by lane, then the block of 16 below kv if
// there is one. Rows are taken one at a time: each is one sequential stream, which the core's
// prefetchers follow at the cache's full rate. Rows taken several at once (to share each load of
// x) are streams a row apart, which they follow at about half of it.
inline Lanes row_lanes(const float* __restrict x, const float* __restrict r, int64_t kv) {
  constexpr int64_t kStep = 2 * kLanes;
  const int64_t kv2 = kv / kStep * kStep;
  Lanes a0{}, a1{};
  for (int64_t p = 0; p < kv2; p += kStep) {
    a0 += load(r + p) * load(x + p);
    a1 += load(r + p + kLanes) * load(x + p + kLanes);
  }
  Lanes a = a0 + a1;
  if (kv2 < kv) a += load(r + kv2) * load(x + kv2);
  return a;
}

// combine16's shuffles. Of the 32 lanes of u followed by v, in blocks of 2n: the lower n lanes
// of each block (lo) or the upper n (hi), for n = 8, 4, 2; and the even or odd lanes.
inline Lanes pick_lo8(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}
inline Lanes pick_hi8(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
                                 31);
}
inline Lanes pick_lo4(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
}
inline Lanes pick_hi4(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
}
inline Lanes pick_lo2(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
}
inline Lanes pick_hi2(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
}
inline Lanes pick_even(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
inline Lanes pick_odd(Lanes u, Lanes v) {
  return __builtin_shufflevector(u, v, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

// finish's pairwise combination of 16 rows' partial sums at once: lane q of the result is row
// q's sum, with the same additions in the same order as finish (lane l with l + 8, then + 4,
// then + 2, then + 1), computed two, four, eight and sixteen rows to a vector.
inline Lanes combine16(const Lanes (&rows)[kLanes]) {
  Lanes c[8], d[4], e[2];
  for (int i = 0; i < 8; ++i) {
    c[i] = pick_lo8(rows[2 * i], rows[2 * i + 1]) + pick_hi8(rows[2 * i], rows[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i)
    d[i] = pick_lo4(c[2 * i], c[2 * i + 1]) + pick_hi4(c[2 * i], c[2 * i + 1]);
  for (int i = 0; i < 2; ++i)
    e[i] = pick_lo2(d[2 * i], d[2 * i + 1]) + pick_hi2(d[2 * i], d[2 * i + 1]);
  return pick_even(e[0], e[1]) + pick_odd(e[0], e[1]);
}

// Sixteen rows a pass, their sums combined as one tree of vector operations (combine16); where
// k mod 16 leaves a tail, or for the rows left over, finish adds each row's tail in order.
JANUS_TARGET_CLONES void gemv_loop(const float* __restrict x, const float* __restrict w,
                                   const float* __restrict b, float* __restrict y, int64_t k,
                                   int64_t m) {
  const int64_t kv = k / kLanes * kLanes;
  int64_t j = 0;
  if (kv == k) {
    for (; j + kLanes <= m; j += kLanes) {
      Lanes rows[kLanes];
      for (int q = 0; q < kLanes; ++q) rows[q] = row_lanes(x, w + (j + q) * k, kv);
      const Lanes sums = combine16(rows) + load(b + j);
      std::memcpy(y + j, &sums, sizeof sums);
    }
  }
  for (; j < m; ++j) {
    const float* r = w + j * k;
    y[j] = finish(row_lanes(x, r, kv), x, r, kv, k, b[j]);
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
