// Philox-4x32-10, the counter-based generator of Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3" (SC'11). Each (key, counter) pair gives four independent 32-bit words, so
// element i of a call can be computed by any thread in any order. Private to src/ops.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "janus/ops/registry.h"

namespace janus::ops {

class Philox {
 public:
  /// The stream of one call: the key is the seed, the upper counter words the call's position.
  explicit Philox(RngKey key)
      : key_{static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32)},
        call_{static_cast<uint32_t>(key.counter), static_cast<uint32_t>(key.counter >> 32)} {}

  /// Four words for block `block` of this call's stream.
  std::array<uint32_t, 4> block(uint64_t block) const {
    std::array<uint32_t, 4> c{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                              call_[0], call_[1]};
    uint32_t k0 = key_[0], k1 = key_[1];
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = uint64_t{kM0} * c[0];
      const uint64_t p1 = uint64_t{kM1} * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
      k0 += kW0;
      k1 += kW1;
    }
    return c;
  }

  /// The words of blocks first .. first + N - 1: words[k][i] is word k of block first + i.
  /// The same values as block(), computed N blocks at a time (each round across all of them,
  /// which the compiler vectorizes).
  template <int N>
  void blocks(uint64_t first, uint32_t (&words)[4][N]) const {
    uint32_t k0 = key_[0], k1 = key_[1];
    for (int i = 0; i < N; ++i) {
      const uint64_t b = first + static_cast<uint64_t>(i);
      words[0][i] = static_cast<uint32_t>(b);
      words[1][i] = static_cast<uint32_t>(b >> 32);
      words[2][i] = call_[0];
      words[3][i] = call_[1];
    }
    for (int round = 0; round < 10; ++round) {
      for (int i = 0; i < N; ++i) {
        const uint32_t c0 = words[0][i], c1 = words[1][i], c2 = words[2][i], c3 = words[3][i];
        const uint64_t p0 = uint64_t{kM0} * c0;
        const uint64_t p1 = uint64_t{kM1} * c2;
        words[0][i] = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
        words[1][i] = static_cast<uint32_t>(p1);
        words[2][i] = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
        words[3][i] = static_cast<uint32_t>(p0);
      }
      k0 += kW0;
      k1 += kW1;
    }
  }

  /// Word `i` of the stream.
  uint32_t word(uint64_t i) const { return block(i / 4)[i % 4]; }

 private:
  static constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  static constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  std::array<uint32_t, 2> key_;
  std::array<uint32_t, 2> call_;
};

/// A uniform number in [0, 1) from 32 random bits (24 significant: exact in float).
inline double uniform01(uint32_t bits) {
  return static_cast<double>(bits >> 8) * (1.0 / 16777216.0);
}

}  // namespace janus::ops
