// Normal samples in single precision, four per Philox block, written so that the compiler
// vectorizes them: the generator's rounds, the logarithm and the sine and cosine are
// branch-free arithmetic on each lane (no libm calls), compiled per instruction set
// (simd_loop.h's target_clones) with identical results in every copy. Private to src/ops.
//
// Block j gives elements 4j .. 4j+3: words (0, 1) one Box-Muller pair, words (2, 3) the next.
// A uniform u = k / 2^24 comes from the top 24 bits of a word. The radius needs log(1 - u1) =
// log(n) - 24 ln 2 with the integer n = 2^24 - k1 in [1, 2^24], whose logarithm is the
// exponent of float(n) times ln 2 plus log(m), m in [sqrt(1/2), sqrt(2)], from the series
// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172 (six terms: error below 1e-11).
// The angle 2 pi u2 is split exactly, in integers, into a quarter turn q and a remainder
// phi in [-pi/4, pi/4], whose sine and cosine are Taylor polynomials (error below 2e-9); the
// quarter turn swaps and negates them.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "../elementwise/simd_loop.h"
#include "philox.h"

namespace janus::ops {

namespace normal_detail {

/// sqrt(-2 log(1 - k / 2^24)) for the top 24 bits k of `word`.
inline float radius(uint32_t word) {
  const int32_t n = (int32_t{1} << 24) - static_cast<int32_t>(word >> 8);  // in [1, 2^24]
  const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(n));    // exact
  // m in [sqrt(1/2), sqrt(2)]: mantissas above sqrt(2)'s (0x3504f3) take exponent -1. Integer
  // selects only: under -ftrapping-math a float comparison in the loop stops vectorization.
  const uint32_t mantissa = bits & 0x7fffffu;
  const uint32_t high = mantissa > 0x3504f3u ? 1u : 0u;
  const int32_t e = static_cast<int32_t>(bits >> 23) - 127 + static_cast<int32_t>(high);
  const float m = std::bit_cast<float>(mantissa | (0x3f800000u - (high << 23)));
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  const float series =
      1.0f +
      s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9 + s2 * (1.0f / 11)))));
  const float log_u = static_cast<float>(e - 24) * 0.693147181f + 2.0f * s * series;
  return std::sqrt(std::fabs(-2.0f * log_u));  // log_u <= 0: fabs only turns -0 into 0
}

/// cos and sin of 2 pi k / 2^24 for the top 24 bits k of `word`.
inline void unit_circle(uint32_t word, float& c, float& s) {
  const int32_t k = static_cast<int32_t>(word >> 8);
  const int32_t q = (k + (int32_t{1} << 21)) >> 22;  // nearest quarter, 0..4
  const float phi =
      static_cast<float>(k - (q << 22)) * (1.57079633f / 4194304.0f);  // |phi| <= pi/4
  const float p2 = phi * phi;
  const float sin_phi =
      phi *
      (1.0f - p2 * (1.0f / 6 - p2 * (1.0f / 120 - p2 * (1.0f / 5040 - p2 * (1.0f / 362880)))));
  const float cos_phi =
      1.0f - p2 * (0.5f - p2 * (1.0f / 24 -
                                p2 * (1.0f / 720 - p2 * (1.0f / 40320 - p2 * (1.0f / 3628800)))));
  const bool swap = (q & 1) != 0;
  const bool neg_cos = (((q + 1) >> 1) & 1) != 0;  // quarters 1 and 2
  const bool neg_sin = ((q >> 1) & 1) != 0;        // quarters 2 and 3
  const float cc = swap ? sin_phi : cos_phi;
  const float ss = swap ? cos_phi : sin_phi;
  c = cc * (neg_cos ? -1.0f : 1.0f);
  s = ss * (neg_sin ? -1.0f : 1.0f);
}

}  // namespace normal_detail

/// out[4i .. 4i+3] = loc + scale * (the normal samples of block first + i), i in [0, blocks).
/// Works in chunks of kLanes blocks: the generator's rounds run across the chunk (rounds
/// outside, lanes inside, so each round is a vector operation), then the transforms.
JANUS_TARGET_CLONES inline void normal_blocks_float(const Philox& gen, uint64_t first,
                                                    int64_t blocks, float loc, float scale,
                                                    float* __restrict out) {
  constexpr int kLanes = 64;
  alignas(64) uint32_t w[4][kLanes];
  for (int64_t done = 0; done < blocks; done += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, blocks - done));
    gen.blocks(first + static_cast<uint64_t>(done), w);
    for (int i = 0; i < lanes; ++i) {
      float c0, s0, c1, s1;
      normal_detail::unit_circle(w[1][i], c0, s0);
      normal_detail::unit_circle(w[3][i], c1, s1);
      const float r0 = normal_detail::radius(w[0][i]);
      const float r1 = normal_detail::radius(w[2][i]);
      float* o = out + 4 * (done + i);
      o[0] = loc + scale * (r0 * c0);
      o[1] = loc + scale * (r0 * s0);
      o[2] = loc + scale * (r1 * c1);
      o[3] = loc + scale * (r1 * s1);
    }
  }
}

}  // namespace janus::ops
