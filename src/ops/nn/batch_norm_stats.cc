#include "batch_norm_stats.h"

namespace janus::ops {

ChannelSplit channel_split(std::string_view op, const Shape& x, int64_t axis) {
  JANUS_CHECK(x.ndim() >= 2, ShapeError,
              "{}: input has shape {}, expected at least 2 dimensions [batch, channels, ...]", op,
              x);
  JANUS_CHECK(axis >= -x.ndim() && axis < x.ndim(), IndexError,
              "{}: axis {} is out of range for input {} with {} dimensions", op, axis, x, x.ndim());
  if (axis < 0) axis += x.ndim();
  ChannelSplit s;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i < axis) s.outer *= x[i];
    if (i == axis) s.channels = x[i];
    if (i > axis) s.inner *= x[i];
  }
  return s;
}

}  // namespace janus::ops
