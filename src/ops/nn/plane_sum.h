// The sum of one contiguous plane of a convolution's gradient in double, in a fixed order: the
// bias gradient (conv2d_backward_bias) and the fused max_pool2d_relu_backward, which sums each
// plane while it is in cache, both use it, so their bits agree. Private to src/ops.
#pragma once

#include <cstdint>

#include "../elementwise/simd_loop.h"

namespace janus::ops {

/// p[0, n) summed in eight interleaved partial sums (element i into partial i % 8), then the
/// partials in order: independent additions, which vectorize, where one running sum waits on
/// each addition before the next (sum's generic reduction keeps one, and took 6% of a LeNet
/// training step's CPU time on the bias gradients of its two convolutions).
template <typename T>
JANUS_TARGET_CLONES double plane_sum(const T* __restrict p, int64_t n) {
  constexpr int kLanes = 8;
  double part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) part[k] += static_cast<double>(p[i + k]);
  }
  for (; i < n; ++i) part[i % kLanes] += static_cast<double>(p[i]);
  double total = 0;
  for (double v : part) total += v;
  return total;
}

}  // namespace janus::ops
