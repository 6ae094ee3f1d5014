// The convolution layers (Conv1D to Conv3DTranspose, one Conv behind them) and the pooling
// layers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "channel_axis.h"

namespace janus::nn {
namespace {

const char* axis_names(int dims) {
  return dims == 1 ? "width" : dims == 2 ? "height, width" : "depth, height, width";
}

// "[batch, channels, height, width]" or "[batch, height, width, channels]".
std::string layout_names(int dims, ChannelAxis axis) {
  return axis == ChannelAxis::kLast ? fmt::format("[batch, {}, channels]", axis_names(dims))
                                    : fmt::format("[batch, channels, {}]", axis_names(dims));
}

void check_image(const Block& b, const NDArray& x, ChannelAxis axis) {
  JANUS_CHECK(x.ndim() == 4, ShapeError, "{}: input has shape {}, expected 4 dimensions {}",
              b.name(), x.shape(), layout_names(2, axis));
}

// `v` with one value per spatial axis (one value repeats), each at least `min_value`.
std::vector<int64_t> per_axis(std::string_view kind, std::string_view arg, int dims,
                              const std::vector<int64_t>& v, int64_t min_value) {
  const size_t n = static_cast<size_t>(dims);
  JANUS_CHECK(v.size() == 1 || v.size() == n, ValueError,
              "{}: {} has {} values [{}], expected 1 or {} ({})", kind, arg, v.size(),
              fmt::join(v, ", "), dims, axis_names(dims));
  std::vector<int64_t> out = v.size() == 1 ? std::vector<int64_t>(n, v[0]) : v;
  for (int64_t e : out) {
    JANUS_CHECK(e >= min_value, ValueError, "{}: {} is [{}], expected values >= {}", kind, arg,
                fmt::join(v, ", "), min_value);
  }
  return out;
}

}  // namespace

Conv::Conv(std::string_view kind, int dims, bool transpose, int64_t channels,
           std::vector<int64_t> kernel_size, std::vector<int64_t> strides,
           std::vector<int64_t> padding, std::vector<int64_t> output_padding,
           std::vector<int64_t> dilation, int64_t groups, std::string activation, bool use_bias,
           int64_t in_channels, InitializerPtr weight_init, InitializerPtr bias_init,
           ChannelAxis channel_axis)
    : Block("conv"),
      kind_(kind),
      dims_(dims),
      transpose_(transpose),
      channels_(channels),
      kernel_(per_axis(kind, "kernel_size", dims, kernel_size, 1)),
      strides_(per_axis(kind, "strides", dims, strides, 1)),
      padding_(per_axis(kind, "padding", dims, padding, 0)),
      output_padding_(per_axis(kind, "output_padding", dims, output_padding, 0)),
      dilation_(per_axis(kind, "dilation", dims, dilation, 1)),
      groups_(groups),
      activation_(ops::parse_activation(activation, kind, "activation")),
      channel_axis_(channel_axis) {
  JANUS_CHECK(channels > 0, ValueError, "{}: channels is {}, expected a positive number", kind,
              channels);
  JANUS_CHECK(in_channels >= 0, ValueError,
              "{}: in_channels is {}, expected a positive number (or 0: from the first input)",
              kind, in_channels);
  JANUS_CHECK(groups >= 1 && channels % groups == 0 && in_channels % groups == 0, ValueError,
              "{}: {} channels (and {} in_channels) must divide into {} groups", kind, channels,
              in_channels, groups);
  for (size_t i = 0; i < output_padding_.size(); ++i) {
    JANUS_CHECK(output_padding_[i] < strides_[i], ValueError,
                "{}: output_padding is [{}], expected each value below the strides [{}]", kind,
                fmt::join(output_padding_, ", "), fmt::join(strides_, ", "));
  }
  weight_ = register_param("weight", weight_shape(in_channels), std::move(weight_init));
  if (use_bias) bias_ = register_param("bias", Shape{channels}, std::move(bias_init));
}

Shape Conv::weight_shape(int64_t in_channels) const {
  std::vector<int64_t> s = transpose_ ? std::vector<int64_t>{in_channels, channels_ / groups_}
                                      : std::vector<int64_t>{channels_, in_channels / groups_};
  const auto at = channel_axis_ == ChannelAxis::kLast ? s.begin() + 1 : s.end();
  s.insert(at, kernel_.begin(), kernel_.end());
  return Shape(std::move(s));
}

int64_t Conv::in_channels() const {
  const Shape& w = weight_->shape();
  return transpose_ ? w[0] : w[channel_index(channel_axis_, w.ndim())] * groups_;
}

NDArray Conv::forward(const NDArray& input) {
  JANUS_CHECK(input.ndim() == dims_ + 2, ShapeError,
              "{}: input has shape {}, expected {} dimensions {}", name(), input.shape(), dims_ + 2,
              layout_names(dims_, channel_axis_));
  const int64_t c = input.shape()[channel_index(channel_axis_, input.ndim())];
  const int64_t expected = in_channels();
  JANUS_CHECK(expected == 0 || c == expected, ShapeError,
              "{}: input of shape {} has {} channels, expected {} (weight {})", name(),
              input.shape(), c, expected, weight_->shape());
  if (!weight_->initialized()) {
    JANUS_CHECK(c % groups_ == 0, ShapeError,
                "{}: input of shape {} has {} channels, which do not divide into {} groups", name(),
                input.shape(), c, groups_);
    weight_->infer_shape(weight_shape(c));
    weight_->finish_deferred_init();
    if (bias_) bias_->finish_deferred_init();
  }
  const NDArray x = to_channels_first(input, channel_axis_);
  // A channels-last weight [O, k..., I / g] moves its last axis to 1 as the input does.
  const NDArray w = to_channels_first(weight_->data(x.device()), channel_axis_);
  const NDArray b =
      bias_ ? bias_->data(x.device()) : zeros(Shape{channels_}, w.dtype(), w.device());
  if (transpose_) {
    static const std::array<const ops::OpDef*, 3> kTranspose = {&ops::get_op("conv1d_transpose"),
                                                                &ops::get_op("conv2d_transpose"),
                                                                &ops::get_op("conv3d_transpose")};
    const NDArray y = ops::invoke(*kTranspose[static_cast<size_t>(dims_ - 1)], {x, w, b},
                                  {strides_, padding_, dilation_, groups_, output_padding_})[0];
    return to_channels_last(activate(y, activation_), channel_axis_);
  }
  // relu runs inside the convolution's call: one engine operation and one output array, with
  // relu's own rule (NaN stays NaN), so it equals the convolution followed by relu.
  static const std::array<const ops::OpDef*, 3> kConv = {
      &ops::get_op("conv1d"), &ops::get_op("conv2d"), &ops::get_op("conv3d")};
  const bool fused_relu = activation_ == ops::Activation::kRelu;
  const ops::Activation post_op = fused_relu ? ops::Activation::kRelu : ops::Activation::kNone;
  const NDArray y = ops::invoke(
      *kConv[static_cast<size_t>(dims_ - 1)], {x, w, b},
      {strides_, padding_, dilation_, groups_, std::string(ops::activation_name(post_op))})[0];
  return to_channels_last(fused_relu ? y : activate(y, activation_), channel_axis_);
}

std::string Conv::describe() const {
  const int64_t in = in_channels();
  return fmt::format("{}({} -> {}, kernel=({}), stride=({}), padding=({}){}{}{})", kind_,
                     in == 0 ? "None" : std::to_string(in), channels_, fmt::join(kernel_, ", "),
                     fmt::join(strides_, ", "), fmt::join(padding_, ", "),
                     transpose_ && std::ranges::any_of(output_padding_, [](int64_t e) { return e; })
                         ? fmt::format(", output_padding=({})", fmt::join(output_padding_, ", "))
                         : "",
                     activation_ == ops::Activation::kNone
                         ? ""
                         : ", " + std::string(ops::activation_name(activation_)),
                     channel_axis_ == ChannelAxis::kLast ? ", channels last" : "");
}

#define JANUS_CONV_LAYER(Class, dims)                                                            \
  Class::Class(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides, \
               std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,      \
               std::string activation, bool use_bias, int64_t in_channels,                       \
               InitializerPtr weight_init, InitializerPtr bias_init, ChannelAxis channel_axis)   \
      : Conv(#Class, dims, false, channels, std::move(kernel_size), std::move(strides),          \
             std::move(padding), {0}, std::move(dilation), groups, std::move(activation),        \
             use_bias, in_channels, std::move(weight_init), std::move(bias_init), channel_axis) {}
#define JANUS_CONV_TRANSPOSE_LAYER(Class, dims)                                                  \
  Class::Class(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides, \
               std::vector<int64_t> padding, std::vector<int64_t> output_padding,                \
               std::vector<int64_t> dilation, int64_t groups, std::string activation,            \
               bool use_bias, int64_t in_channels, InitializerPtr weight_init,                   \
               InitializerPtr bias_init, ChannelAxis channel_axis)                               \
      : Conv(#Class, dims, true, channels, std::move(kernel_size), std::move(strides),           \
             std::move(padding), std::move(output_padding), std::move(dilation), groups,         \
             std::move(activation), use_bias, in_channels, std::move(weight_init),               \
             std::move(bias_init), channel_axis) {}

JANUS_CONV_LAYER(Conv1D, 1)
JANUS_CONV_LAYER(Conv2D, 2)
JANUS_CONV_LAYER(Conv3D, 3)
JANUS_CONV_TRANSPOSE_LAYER(Conv1DTranspose, 1)
JANUS_CONV_TRANSPOSE_LAYER(Conv2DTranspose, 2)
JANUS_CONV_TRANSPOSE_LAYER(Conv3DTranspose, 3)

#undef JANUS_CONV_LAYER
#undef JANUS_CONV_TRANSPOSE_LAYER

MaxPool2D::MaxPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool ceil_mode, ChannelAxis channel_axis)
    : Block("pool"),
      pool_(std::move(pool_size)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      ceil_mode_(ceil_mode),
      channel_axis_(channel_axis) {}

NDArray MaxPool2D::forward(const NDArray& x) {
  check_image(*this, x, channel_axis_);
  return to_channels_last(
      max_pool2d(to_channels_first(x, channel_axis_), pool_, strides_, padding_, ceil_mode_),
      channel_axis_);
}

std::string MaxPool2D::describe() const {
  return fmt::format("MaxPool2D(size=({}), stride=({}), padding=({}), ceil_mode={})",
                     fmt::join(pool_, ", "), fmt::join(strides_.empty() ? pool_ : strides_, ", "),
                     fmt::join(padding_, ", "), ceil_mode_ ? "True" : "False");
}

AvgPool2D::AvgPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool count_include_pad, bool ceil_mode,
                     ChannelAxis channel_axis)
    : Block("pool"),
      pool_(std::move(pool_size)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      count_include_pad_(count_include_pad),
      ceil_mode_(ceil_mode),
      channel_axis_(channel_axis) {}

NDArray AvgPool2D::forward(const NDArray& x) {
  check_image(*this, x, channel_axis_);
  return to_channels_last(avg_pool2d(to_channels_first(x, channel_axis_), pool_, strides_, padding_,
                                     count_include_pad_, ceil_mode_),
                          channel_axis_);
}

std::string AvgPool2D::describe() const {
  return fmt::format("AvgPool2D(size=({}), stride=({}), padding=({}), ceil_mode={})",
                     fmt::join(pool_, ", "), fmt::join(strides_.empty() ? pool_ : strides_, ", "),
                     fmt::join(padding_, ", "), ceil_mode_ ? "True" : "False");
}

GlobalAvgPool2D::GlobalAvgPool2D(ChannelAxis channel_axis)
    : Block("pool"), channel_axis_(channel_axis) {}

NDArray GlobalAvgPool2D::forward(const NDArray& x) {
  check_image(*this, x, channel_axis_);
  return mean(x, spatial_axes(channel_axis_, 4), /*keepdims=*/true);
}

}  // namespace janus::nn
