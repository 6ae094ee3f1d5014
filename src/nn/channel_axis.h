// The transposes between a channels-last layer's arrays [N, spatial..., C] and the
// channels-first ones [N, C, spatial...] that the convolution and pooling operators compute on.
#pragma once

#include <numeric>
#include <vector>

#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

/// The index of the channel axis of an array of `ndim` dimensions.
inline int64_t channel_index(ChannelAxis axis, int64_t ndim) {
  return axis == ChannelAxis::kLast ? ndim - 1 : 1;
}

/// [N, spatial..., C] -> [N, C, spatial...] when `axis` is kLast; `x` itself otherwise.
inline NDArray to_channels_first(const NDArray& x, ChannelAxis axis) {
  if (axis == ChannelAxis::kFirst) return x;
  std::vector<int64_t> perm(static_cast<size_t>(x.ndim()));
  std::iota(perm.begin() + 1, perm.end(), 0);
  perm[0] = 0;
  perm[1] = x.ndim() - 1;
  return transpose(x, std::move(perm));
}

/// [N, C, spatial...] -> [N, spatial..., C] when `axis` is kLast; `y` itself otherwise.
inline NDArray to_channels_last(const NDArray& y, ChannelAxis axis) {
  if (axis == ChannelAxis::kFirst) return y;
  std::vector<int64_t> perm(static_cast<size_t>(y.ndim()));
  std::iota(perm.begin(), perm.end(), 1);
  perm[0] = 0;
  perm.back() = 1;
  return transpose(y, std::move(perm));
}

/// The spatial axes of an array of `ndim` dimensions: [1, ndim - 1) or [2, ndim).
inline std::vector<int64_t> spatial_axes(ChannelAxis axis, int64_t ndim) {
  std::vector<int64_t> axes(static_cast<size_t>(ndim - 2));
  std::iota(axes.begin(), axes.end(), axis == ChannelAxis::kLast ? 1 : 2);
  return axes;
}

}  // namespace janus::nn
