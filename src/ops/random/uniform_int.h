// Exactly uniform integers in [0, range) from a counter-based Philox stream: shared by randint
// and permutation. Private to src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include "philox.h"

namespace janus::ops {

/// Draw `index` of the stream of `gen`: an integer uniform in [0, range), range >= 1.
///
/// Lemire's multiply-shift ("Fast random integer generation in an interval", 2019): for 64
/// random bits x, the high 64 bits of the 128-bit product x * range lie in [0, range). Taken
/// alone that favours some results by up to range / 2^64; rejecting the x whose low 64 bits
/// fall below 2^64 mod range removes the bias exactly. The remainder (one division) is only
/// computed when the low bits fall below `range`, which is rare for small ranges.
///
/// Draw `index` reads block `index` of the stream: two 64-bit candidates. When both are
/// rejected (probability below (range / 2^64)^2, at most 1/4), it goes on to blocks
/// index + a * 2^56 for a = 1, 2, ..., so every draw depends only on its index (any thread may
/// compute it, in any order), for arrays of fewer than 2^56 elements. After 256 blocks (a
/// probability below 2^-500) it keeps the last candidate.
inline uint64_t uniform_below(const Philox& gen, uint64_t index, uint64_t range) {
  constexpr uint64_t kMaxBlocks = 256;
  uint64_t threshold = 0;
  bool have_threshold = false;
  uint64_t last = 0;
  for (uint64_t a = 0; a < kMaxBlocks; ++a) {
    const std::array<uint32_t, 4> w = gen.block(index + (a << 56));
    for (int half = 0; half < 2; ++half) {
      const uint64_t x = uint64_t{w[2 * half]} | uint64_t{w[2 * half + 1]} << 32;
      const unsigned __int128 m = static_cast<unsigned __int128>(x) * range;
      const uint64_t low_bits = static_cast<uint64_t>(m);
      last = static_cast<uint64_t>(m >> 64);
      if (low_bits >= range) return last;  // at or above any threshold: no division needed
      if (!have_threshold) {
        threshold = (0 - range) % range;  // 2^64 mod range
        have_threshold = true;
      }
      if (low_bits >= threshold) return last;
    }
  }
  return last;
}

/// The integer element types that randint and permutation write (bool excluded).
inline bool is_sampled_integer(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kUInt8;
}

/// The smallest and largest value of an integer element type, as int64.
inline std::pair<int64_t, int64_t> integer_limits(DType dtype) {
  switch (dtype) {
    case DType::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::kUInt8:
      return {0, 255};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

}  // namespace janus::ops
