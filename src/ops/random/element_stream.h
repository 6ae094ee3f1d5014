// The random stream of one element of a rejection sampler (random_gamma, random_poisson): the
// number of draws per element varies, so element i of n takes blocks i, i + n, i + 2n, ... of
// the call's Philox stream. Each element's draws are then fixed by the seed, the call's position
// and i alone, whatever the thread that computes it. Private to src/ops.
#pragma once

#include <array>
#include <cstdint>

#include "philox.h"

namespace janus::ops {

class ElementStream {
 public:
  ElementStream(const Philox& gen, int64_t i, int64_t n)
      : gen_(gen), next_(static_cast<uint64_t>(i)), step_(static_cast<uint64_t>(n)) {}

  /// The next block of four words of this element.
  std::array<uint32_t, 4> block() {
    const auto w = gen_.block(next_);
    next_ += step_;
    return w;
  }

 private:
  const Philox& gen_;
  uint64_t next_;
  uint64_t step_;
};

/// A uniform number in the open interval (0, 1) from two words (53 significant bits): its log
/// is finite and it is never 1.
inline double uniform_open(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);  // 53 bits
  return (static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) + 0.5) * 0x1p-53;
}

}  // namespace janus::ops
