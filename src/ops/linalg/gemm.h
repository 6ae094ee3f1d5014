// One 2-D matrix product op(A)[M, K] · op(B)[K, N], shared by dot and matmul: oneDNN matmul
// primitives cached by shape for float32, a loop for float64. Private to src/ops.
#pragma once

#include <cstdint>

#include <dnnl.hpp>

#include "janus/core/dtype.h"

namespace janus::ops {

/// Shape of one product; a transposed operand is described by strides, so no copy is made.
struct GemmKey {
  int64_t m, k, n;
  bool ta, tb;
  auto operator<=>(const GemmKey&) const = default;
};

/// True when the product runs through oneDNN (float32, no zero extent).
bool uses_onednn(const GemmKey& key, DType dtype);

/// One cached product: its oneDNN primitive, and the memory objects that run it, built once and
/// reused (a run only rebinds the data pointers). Opaque outside gemm.cc.
class CachedGemm;

/// The product for `key`, from the primitive cache (primitive_cache.h): built once and shared
/// by every worker. Call it first from an operator's `prepare` (the caller's thread): a new
/// implementation is run once there (settle_onednn_state).
const CachedGemm& cached_gemm(const GemmKey& key);

/// C = op(A) · op(B) in float32 with `gemm` (from cached_gemm; fetch it once for a batch).
/// Safe to call from several threads at once.
void run_gemm(const CachedGemm& gemm, const void* a, const void* b, void* c);

/// The same product by loops, for float64.
template <typename T>
void gemm_reference(const T* a, const T* b, T* c, const GemmKey& s) {
  for (int64_t i = 0; i < s.m * s.n; ++i) c[i] = T(0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t p = 0; p < s.k; ++p) {
      const T av = s.ta ? a[p * s.m + i] : a[i * s.k + p];
      for (int64_t j = 0; j < s.n; ++j) {
        c[i * s.n + j] += av * (s.tb ? b[j * s.k + p] : b[p * s.n + j]);
      }
    }
  }
}

}  // namespace janus::ops
