// The 1-D and 3-D pooling layers and the 1-D and 3-D global pools, composed of the 2-D pooling
// operators and reductions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "channel_axis.h"

namespace janus::nn {
namespace {

const char* axis_names(int dims) { return dims == 1 ? "width" : "depth, height, width"; }

// `v` with one value per spatial axis (one value repeats), each at least `min_value`.
std::vector<int64_t> per_axis(std::string_view kind, std::string_view arg, int dims,
                              const std::vector<int64_t>& v, int64_t min_value) {
  const size_t n = static_cast<size_t>(dims);
  JANUS_CHECK(v.size() == 1 || v.size() == n, ValueError,
              "{}: {} has {} values [{}], expected {} ({})", kind, arg, v.size(),
              fmt::join(v, ", "), dims == 1 ? "1" : "1 or 3", axis_names(dims));
  std::vector<int64_t> out = v.size() == 1 ? std::vector<int64_t>(n, v[0]) : v;
  for (int64_t e : out) {
    JANUS_CHECK(e >= min_value, ValueError, "{}: {} is [{}], expected values >= {}", kind, arg,
                fmt::join(v, ", "), min_value);
  }
  return out;
}

void check_input(const Block& b, int dims, const NDArray& x, ChannelAxis axis) {
  JANUS_CHECK(x.ndim() == dims + 2, ShapeError, "{}: input has shape {}, expected {} dimensions {}",
              b.name(), x.shape(), dims + 2,
              axis == ChannelAxis::kLast ? fmt::format("[batch, {}, channels]", axis_names(dims))
                                         : fmt::format("[batch, channels, {}]", axis_names(dims)));
}

}  // namespace

Pooling::Pooling(std::string_view kind, int dims, bool max, std::vector<int64_t> pool_size,
                 std::vector<int64_t> strides, std::vector<int64_t> padding, bool ceil_mode,
                 bool count_include_pad, ChannelAxis channel_axis)
    : Block("pool"),
      kind_(kind),
      dims_(dims),
      max_(max),
      pool_(per_axis(kind, "pool_size", dims, pool_size, 1)),
      strides_(strides.empty() ? pool_ : per_axis(kind, "strides", dims, strides, 1)),
      padding_(per_axis(kind, "padding", dims, padding, 0)),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad),
      channel_axis_(channel_axis) {
  for (size_t i = 0; i < pool_.size(); ++i) {
    JANUS_CHECK(2 * padding_[i] <= pool_[i], ValueError,
                "{}: padding [{}] is more than half the pool size [{}]", kind,
                fmt::join(padding_, ", "), fmt::join(pool_, ", "));
  }
}

NDArray Pooling::forward(const NDArray& input) {
  check_input(*this, dims_, input, channel_axis_);
  const std::vector<int64_t> spatial = spatial_axes(channel_axis_, input.ndim());
  for (size_t a = 0; a < spatial.size(); ++a) {
    JANUS_CHECK(input.shape()[spatial[a]] + 2 * padding_[a] >= pool_[a], ShapeError,
                "{}: input of shape {} is smaller than the pool [{}] with padding [{}] on axis {}",
                name(), input.shape(), fmt::join(pool_, ", "), fmt::join(padding_, ", "),
                spatial[a]);
  }
  const NDArray x = to_channels_first(input, channel_axis_);
  const Shape& s = x.shape();
  // One 2-D pool over the last two axes of a 4-D array, the first of them pooled by (k0, s0, p0)
  // and the second by (k1, s1, p1).
  auto pool2d = [&](const NDArray& a, std::vector<int64_t> k, std::vector<int64_t> st,
                    std::vector<int64_t> p) {
    return max_ ? max_pool2d(a, std::move(k), std::move(st), std::move(p), ceil_mode_)
                : avg_pool2d(a, std::move(k), std::move(st), std::move(p), count_include_pad_,
                             ceil_mode_);
  };
  if (dims_ == 1) {
    const NDArray y = pool2d(reshape(x, Shape{s[0], s[1], 1, s[2]}), {1, pool_[0]},
                             {1, strides_[0]}, {0, padding_[0]});
    return to_channels_last(reshape(y, Shape{s[0], s[1], y.shape()[3]}), channel_axis_);
  }
  // (H, W) with D folded into the channels, then D over [N, C, D, H' * W'].
  const NDArray hw = pool2d(reshape(x, Shape{s[0], s[1] * s[2], s[3], s[4]}), {pool_[1], pool_[2]},
                            {strides_[1], strides_[2]}, {padding_[1], padding_[2]});
  const int64_t h = hw.shape()[2], w = hw.shape()[3];
  const NDArray d = pool2d(reshape(hw, Shape{s[0], s[1], s[2], h * w}), {pool_[0], 1},
                           {strides_[0], 1}, {padding_[0], 0});
  return to_channels_last(reshape(d, Shape{s[0], s[1], d.shape()[2], h, w}), channel_axis_);
}

std::string Pooling::describe() const {
  return fmt::format("{}(size=({}), stride=({}), padding=({}), ceil_mode={})", kind_,
                     fmt::join(pool_, ", "), fmt::join(strides_, ", "), fmt::join(padding_, ", "),
                     ceil_mode_ ? "True" : "False");
}

MaxPool1D::MaxPool1D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool ceil_mode, ChannelAxis channel_axis)
    : Pooling("MaxPool1D", 1, true, std::move(pool_size), std::move(strides), std::move(padding),
              ceil_mode, true, channel_axis) {}

MaxPool3D::MaxPool3D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool ceil_mode, ChannelAxis channel_axis)
    : Pooling("MaxPool3D", 3, true, std::move(pool_size), std::move(strides), std::move(padding),
              ceil_mode, true, channel_axis) {}

AvgPool1D::AvgPool1D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad,
                     ChannelAxis channel_axis)
    : Pooling("AvgPool1D", 1, false, std::move(pool_size), std::move(strides), std::move(padding),
              ceil_mode, count_include_pad, channel_axis) {}

AvgPool3D::AvgPool3D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad,
                     ChannelAxis channel_axis)
    : Pooling("AvgPool3D", 3, false, std::move(pool_size), std::move(strides), std::move(padding),
              ceil_mode, count_include_pad, channel_axis) {}

GlobalPooling::GlobalPooling(std::string_view kind, int dims, bool max, ChannelAxis channel_axis)
    : Block("pool"), kind_(kind), dims_(dims), max_(max), channel_axis_(channel_axis) {}

NDArray GlobalPooling::forward(const NDArray& x) {
  check_input(*this, dims_, x, channel_axis_);
  std::vector<int64_t> axes = spatial_axes(channel_axis_, x.ndim());
  return max_ ? max(x, std::move(axes), /*keepdims=*/true)
              : mean(x, std::move(axes), /*keepdims=*/true);
}

GlobalMaxPool1D::GlobalMaxPool1D(ChannelAxis channel_axis)
    : GlobalPooling("GlobalMaxPool1D", 1, true, channel_axis) {}
GlobalMaxPool3D::GlobalMaxPool3D(ChannelAxis channel_axis)
    : GlobalPooling("GlobalMaxPool3D", 3, true, channel_axis) {}
GlobalAvgPool1D::GlobalAvgPool1D(ChannelAxis channel_axis)
    : GlobalPooling("GlobalAvgPool1D", 1, false, channel_axis) {}
GlobalAvgPool3D::GlobalAvgPool3D(ChannelAxis channel_axis)
    : GlobalPooling("GlobalAvgPool3D", 3, false, channel_axis) {}

}  // namespace janus::nn
