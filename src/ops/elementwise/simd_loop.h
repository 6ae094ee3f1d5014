// The hot contiguous loops of the elementwise and unary families, compiled for several x86-64
// instruction sets and chosen at run time. Private to src/ops.
//
// The library is built for baseline x86-64 (SSE2), so that it runs on any x86-64 machine. The
// loops below carry GCC's function multiversioning, target_clones("avx512f", "avx2",
// "default"): the compiler emits one copy of each loop per instruction set (the elementwise
// function, a captureless lambda, is inlined into each copy and vectorized with that set's
// vector width) plus a resolver that picks, once at load time, the widest copy the CPU
// supports (an ifunc). Builds with -ffp-contract=off (CMakeLists.txt), so no copy fuses a
// multiply and an add that the baseline copy rounds separately: every copy gives bit-identical
// results.
//
// float16's conversions to and from float are out-of-line calls that do not vectorize, so
// loops touching float16 take a plain single copy instead.
#pragma once

#include <cstdint>
#include <type_traits>

#include "janus/core/dtype.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(JANUS_NO_TARGET_CLONES)
#define JANUS_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define JANUS_TARGET_CLONES
#endif

namespace janus::ops::simd {

/// True when loops over these element types are worth compiling per instruction set.
template <typename... T>
inline constexpr bool kVectorizable = (!std::is_same_v<std::remove_cv_t<T>, float16> && ...);

namespace detail {

// SA and SB are the strides (0 or 1) of a and b: 0 reads element 0 throughout (a scalar
// operand), 1 walks the array.
template <int SA, int SB, typename TO, typename TA, typename TB, typename F>
JANUS_TARGET_CLONES void map2_clones(TO* __restrict o, const TA* __restrict a,
                                     const TB* __restrict b, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[SA * i], b[SB * i]);
}

template <int SA, int SB, typename TO, typename TA, typename TB, typename F>
void map2_plain(TO* __restrict o, const TA* __restrict a, const TB* __restrict b, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[SA * i], b[SB * i]);
}

template <typename TO, typename TA, typename F>
JANUS_TARGET_CLONES void map1_clones(TO* __restrict o, const TA* __restrict a, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <typename TO, typename TA, typename F>
void map1_plain(TO* __restrict o, const TA* __restrict a, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <typename TO, typename TA, typename TB, typename TC, typename F>
JANUS_TARGET_CLONES void map3_clones(TO* __restrict o, const TA* __restrict a,
                                     const TB* __restrict b, const TC* __restrict c, int64_t n,
                                     F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i], c[i]);
}

template <typename TO, typename TA, typename TB, typename TC, typename F>
void map3_plain(TO* __restrict o, const TA* __restrict a, const TB* __restrict b,
                const TC* __restrict c, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i], c[i]);
}

template <typename A, typename T, typename F>
JANUS_TARGET_CLONES void fold_row_clones(A* __restrict acc, const T* __restrict row, int64_t n,
                                         F f) {
  for (int64_t i = 0; i < n; ++i) acc[i] = f(acc[i], static_cast<A>(row[i]));
}

template <typename A, typename T, typename F>
void fold_row_plain(A* __restrict acc, const T* __restrict row, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) acc[i] = f(acc[i], static_cast<A>(row[i]));
}

}  // namespace detail

/// acc[i] = f(acc[i], A(row[i])) for i in [0, n): one row folded into a strip of accumulators
/// (a reduction over a leading axis). The arrays may not overlap.
template <typename A, typename T, typename F>
void fold_row(A* acc, const T* row, int64_t n, F f) {
  if constexpr (kVectorizable<T>) {
    detail::fold_row_clones(acc, row, n, f);
  } else {
    detail::fold_row_plain(acc, row, n, f);
  }
}

/// o[i] = f(a[i]) for i in [0, n). The arrays may not overlap unless o == a (in place).
template <typename TO, typename TA, typename F>
void map1(TO* o, const TA* a, int64_t n, F f) {
  if constexpr (kVectorizable<TO, TA>) {
    detail::map1_clones(o, a, n, f);
  } else {
    detail::map1_plain(o, a, n, f);
  }
}

/// o[i] = f(a[SA·i], b[SB·i]) for i in [0, n): SA = 0 (or SB = 0) makes a (or b) a scalar.
template <int SA, int SB, typename TO, typename TA, typename TB, typename F>
void map2(TO* o, const TA* a, const TB* b, int64_t n, F f) {
  static_assert((SA == 0 || SA == 1) && (SB == 0 || SB == 1), "strides are 0 or 1");
  if constexpr (kVectorizable<TO, TA, TB>) {
    detail::map2_clones<SA, SB>(o, a, b, n, f);
  } else {
    detail::map2_plain<SA, SB>(o, a, b, n, f);
  }
}

/// o[i] = f(a[i], b[i], c[i]) for i in [0, n).
template <typename TO, typename TA, typename TB, typename TC, typename F>
void map3(TO* o, const TA* a, const TB* b, const TC* c, int64_t n, F f) {
  if constexpr (kVectorizable<TO, TA, TB, TC>) {
    detail::map3_clones(o, a, b, c, n, f);
  } else {
    detail::map3_plain(o, a, b, c, n, f);
  }
}

#if defined(__x86_64__)
/// Whether this CPU runs AVX-512F, for the kernels written for it alone (with a portable
/// fallback that gives the same bits, or another kernel).
inline bool has_avx512f() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}
#endif

}  // namespace janus::ops::simd
