// gemv_bias: the batch-1 fully_connected product (gemv.h).
#include "gemv.h"

#include <cstring>
#include <utility>

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

// Of the 32 lanes of u followed by v, taken in blocks of 2n: the lower n lanes of each block
// (kHigh false) or the upper n.
template <int kN, bool kHigh, size_t... kI>
inline Lanes pick(Lanes u, Lanes v, std::index_sequence<kI...>) {
  return __builtin_shufflevector(u, v, (kI / kN * 2 * kN + (kHigh ? kN : 0) + kI % kN)...);
}

// One level of the tree over v[0, count): v[i], for i < count / 2, becomes the lower plus the
// upper n lanes of each block of 2n lanes of v[2i] followed by v[2i + 1].
template <int kN>
inline void fold(Lanes* v, int count) {
  constexpr auto lanes = std::make_index_sequence<kLanes>();
  for (int i = 0; i < count / 2; ++i) {
    v[i] = pick<kN, false>(v[2 * i], v[2 * i + 1], lanes) +
           pick<kN, true>(v[2 * i], v[2 * i + 1], lanes);
  }
}

// finish's pairwise combination of 16 rows' partial sums at once: lane q of the result is row
// q's sum, with the same additions in the same order as finish (lane l with l + 8, then + 4,
// then + 2, then + 1), computed two, four, eight and sixteen rows to a vector, in `rows`' own
// storage (it overwrites them).
inline Lanes combine16(Lanes (&rows)[kLanes]) {
  fold<8>(rows, 16);
  fold<4>(rows, 8);
  fold<2>(rows, 4);
  fold<1>(rows, 2);
  return rows[0];
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
