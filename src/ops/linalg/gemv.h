// The batch-1 product of fully_connected, y = W·x + b, as a vectorized loop of our own: for one
// input row, oneDNN's per-call dispatch (memory objects, argument map, stream) costs as much as
// the arithmetic, which is bound by reading W from cache. Private to src/ops.
#pragma once

#include <cstdint>

#include "onednn.h"

namespace janus::ops {

/// Whether an [n, k] x [m, k]ᵀ product takes gemv_bias rather than oneDNN: one row, and few
/// enough multiply-adds that oneDNN would run it on one thread too (kParallelGemmMacs); larger
/// ones gain from oneDNN's threads.
constexpr bool use_gemv(int64_t n, int64_t k, int64_t m) {
  return n == 1 && k > 0 && m > 0 && k * m < kParallelGemmMacs;
}

/// y[j] = b[j] + Σ_p w[j·k + p]·x[p] for j in [0, m) (W row-major [m, k], as fully_connected's
/// weight), then relu_value when `relu`. One thread. Each sum is taken in one fixed order (32
/// interleaved partial sums over p, their two blocks of 16 added lane by lane, then the block of
/// 16 left below k rounded down to 16 if there is one, the 16 sums combined pairwise, then the
/// k mod 16 tail, then the bias), whichever instruction set runs it, so results are bit-identical
/// across machines and calls.
void gemv_bias(const float* x, const float* w, const float* b, float* y, int64_t k, int64_t m,
               bool relu);

}  // namespace janus::ops
