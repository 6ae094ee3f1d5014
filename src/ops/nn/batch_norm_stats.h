// What batch_norm and batch_norm_backward share: the channel axis split of x and a loop over
// channels. Private to src/ops.
#pragma once

#include <cstdint>
#include <string_view>

#include "../op_utils.h"

namespace janus::ops {

/// x viewed as [outer, channels, inner] around the channel axis.
struct ChannelSplit {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t per_channel() const { return outer * inner; }
  int64_t index(int64_t o, int64_t c, int64_t i) const { return (o * channels + c) * inner + i; }
};

/// Checks `axis` against x's rank (naming `op`) and splits x's shape around it.
ChannelSplit channel_split(std::string_view op, const Shape& x, int64_t axis);

/// body(c) for every channel, split across the kernel's threads by the channels' work.
template <typename Body>
void for_each_channel(const ChannelSplit& s, const RunContext& ctx, Body body) {
  const int64_t per = std::max<int64_t>(1, s.per_channel());
  parallel_for(s.channels * per, ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t c = (lo + per - 1) / per; c < (hi + per - 1) / per; ++c) body(c);
  });
}

}  // namespace janus::ops
