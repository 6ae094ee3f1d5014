// exp, expm1, sigmoid and tanh of float written without calls, branches or integer conversions of
// floating-point values, so that the loops of simd_loop.h vectorize them (libm's expf and tanhf
// are calls, one element at a time). The double overloads are libm's: float is the hot dtype.
// Private to src/ops.
//
// Accuracy: within a few ulp of the exact value (the conformance suite checks float32 kernels
// against a float64 reference). exp(-inf) = 0, exp(inf) = inf, results below FLT_MIN are the
// correctly scaled subnormals (or 0), and NaN gives NaN. Every operation is an IEEE operation
// the compiler may not reorder (-ffp-contract=off, no -ffast-math), so the vector and scalar
// copies of a loop give the same bits.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace janus::ops::vmath {

namespace detail {

// x = n ln2 + r with n an integer and |r| <= ln2 / 2. ln2 is split in two (Cody and Waite):
// kLn2Hi has 15 significant bits, so n * kLn2Hi is exact for the |n| <= 151 seen here.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682030941723e-6f;
// Adding 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer (round to nearest),
// which lands in the low bits of the sum's representation.
constexpr float kRound = 12582912.0f;

struct Reduced {
  float r;     // |r| <= ln2 / 2 (NaN for NaN)
  uint32_t n;  // the integer n, two's complement
};

// `x` is already clamped to [-104, 89]: |x log2e| < 2^22.
inline Reduced reduce(float x) {
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  return {r, std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kRound)};
}

// e^r - 1 for |r| <= ln2 / 2: Taylor to degree 7 (the truncation, r^8 / 8!, is below 6e-9 of
// the result, a tenth of float's half ulp); no cancellation near r = 0.
inline float expm1_reduced(float r) {
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  return (p * r) * r + r;
}

// 2^k for -126 <= k <= 127, from its exponent bits.
inline float pow2(uint32_t k) { return std::bit_cast<float>((k + 127u) << 23); }

// `yes` where `c`, else `no`, by bit masks: GCC keeps a ?: of floats a branch (which stops the
// loop from vectorizing) unless both sides are plain values it may compute unconditionally.
inline float select(bool c, float yes, float no) {
  const uint32_t mask = -static_cast<uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(yes) & mask) |
                              (std::bit_cast<uint32_t>(no) & ~mask));
}

// Clamps to [lo, hi] keeping NaN (each comparison is false for NaN, which passes through).
inline float clamp(float x, float lo, float hi) {
  x = select(x < lo, lo, x);
  return select(x > hi, hi, x);
}

}  // namespace detail

/// e^x.
inline float exp(float x) {
  // Outside [-104, 89] e^x rounds to 0 or overflows to inf, as it does at the clamps.
  const detail::Reduced red = detail::reduce(detail::clamp(x, -104.0f, 89.0f));
  const float p = detail::expm1_reduced(red.r) + 1.0f;
  // 2^n in two factors (n in [-150, 129]), each a normal float: the product rounds to a
  // subnormal or overflows to inf as the exact value would.
  const uint32_t half = static_cast<uint32_t>(static_cast<int32_t>(red.n) >> 1);
  return p * detail::pow2(half) * detail::pow2(red.n - half);
}
inline double exp(double x) { return std::exp(x); }

/// e^x - 1 for x <= 0 (exact near 0, where e^x - 1 would cancel), -1 below -18.
inline float expm1_nonpositive(float x) {
  // Below -18, e^x - 1 rounds to -1 in float.
  const detail::Reduced red = detail::reduce(detail::clamp(x, -18.0f, 0.0f));
  const float q = detail::expm1_reduced(red.r);
  // e^x - 1 = 2^n (q + 1) - 1 = 2^n q + (2^n - 1), n in [-26, 0]; exact when n = 0.
  const float s = detail::pow2(red.n);
  return s * q + (s - 1.0f);
}

/// 1 / (1 + e^-x), never exp of a large positive number: e = e^-|x| in [0, 1], and the
/// result is 1 / (1 + e) for x >= 0, e / (1 + e) below (one rounding each). e^-|x| has its own
/// path, cheaper than exp's: its argument is never positive, so one clamp; 2^n, n in [-150, 0],
/// scales in two products, the first exact, the second rounding once to e's subnormal when it is
/// one (as exp's two factors do); and e^r comes from a degree-6 polynomial fitted to it on
/// |r| <= ln2 / 2 (relative error below 2e-8, a third of float's half ulp), not expm1's Taylor
/// series, which keeps r's relative accuracy near 0 that 1 + e^r does not need.
inline float sigmoid(float x) {
  const float a = detail::select(-std::fabs(x) < -104.0f, -104.0f, -std::fabs(x));
  const detail::Reduced red = detail::reduce(a);
  const float r = red.r;
  float q = 1.38429447542876e-3f;
  q = q * r + 8.374164812266827e-3f;
  q = q * r + 4.1668012738227844e-2f;
  q = q * r + 0.16666431725025177f;
  q = q * r + 0.4999999403953552f;
  q = q * r + 1.0f;
  const float p = q * r + 1.0f;  // e^r
  const float e = (p * detail::pow2(red.n + 64u)) * 0x1p-64f;
  return detail::select(x >= 0.0f, 1.0f, e) / (1.0f + e);
}
inline double sigmoid(double x) {
  if (x >= 0) return 1 / (1 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1 + e);
}

/// tanh x = sign(x) (1 - e^-2|x|) / (1 + e^-2|x|), with m = e^-2|x| - 1 from expm1, so
/// that small |x| keeps its relative accuracy: |tanh x| = -m / (2 + m).
inline float tanh(float x) {
  const float m = expm1_nonpositive(-2.0f * std::fabs(x));
  return std::copysign(-m / (2.0f + m), x);
}
inline double tanh(double x) { return std::tanh(x); }

}  // namespace janus::ops::vmath
