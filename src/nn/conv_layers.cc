// Conv2D and the pooling layers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

std::vector<int64_t> pair_of(const std::vector<int64_t>& v) {
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

void check_image(const Block& b, const NDArray& x) {
  JANUS_CHECK(x.ndim() == 4, ShapeError,
              "{}: input has shape {}, expected 4 dimensions [batch, channels, height, width]",
              b.name(), x.shape());
}

}  // namespace

Conv2D::Conv2D(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides,
               std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
               std::string activation, bool use_bias, int64_t in_channels,
               InitializerPtr weight_init, InitializerPtr bias_init)
    : Block("conv"),
      channels_(channels),
      kernel_(pair_of(kernel_size)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      dilation_(std::move(dilation)),
      groups_(groups),
      activation_(ops::parse_activation(activation, "Conv2D", "activation")) {
  JANUS_CHECK(channels > 0, ValueError, "Conv2D: channels is {}, expected a positive number",
              channels);
  JANUS_CHECK(kernel_.size() == 2 && kernel_[0] > 0 && kernel_[1] > 0, ValueError,
              "Conv2D: kernel_size is [{}], expected 1 or 2 positive values",
              fmt::join(kernel_size, ", "));
  JANUS_CHECK(groups >= 1 && channels % groups == 0 && in_channels % groups == 0, ValueError,
              "Conv2D: {} channels (and {} in_channels) must divide into {} groups", channels,
              in_channels, groups);
  weight_ = register_param("weight", Shape{channels, in_channels / groups, kernel_[0], kernel_[1]},
                           std::move(weight_init));
  if (use_bias) bias_ = register_param("bias", Shape{channels}, std::move(bias_init));
}

NDArray Conv2D::forward(const NDArray& x) {
  check_image(*this, x);
  const int64_t expected = weight_->shape()[1] * groups_;
  JANUS_CHECK(expected == 0 || x.shape()[1] == expected, ShapeError,
              "{}: input of shape {} has {} channels, expected {} (weight {})", name(), x.shape(),
              x.shape()[1], expected, weight_->shape());
  if (!weight_->initialized()) {
    JANUS_CHECK(x.shape()[1] % groups_ == 0, ShapeError,
                "{}: input of shape {} has {} channels, which do not divide into {} groups", name(),
                x.shape(), x.shape()[1], groups_);
    weight_->infer_shape(Shape{channels_, x.shape()[1] / groups_, kernel_[0], kernel_[1]});
    weight_->finish_deferred_init();
    if (bias_) bias_->finish_deferred_init();
  }
  const NDArray& w = weight_->data(x.device());
  const NDArray b =
      bias_ ? bias_->data(x.device()) : zeros(Shape{channels_}, w.dtype(), w.device());
  // relu runs inside the convolution's call: one engine operation and one output array, with
  // relu's own rule (NaN stays NaN), so it equals conv2d followed by relu.
  static const ops::OpDef& conv = ops::get_op("conv2d");
  const bool fused_relu = activation_ == ops::Activation::kRelu;
  const ops::Activation post_op = fused_relu ? ops::Activation::kRelu : ops::Activation::kNone;
  const NDArray y = ops::invoke(
      conv, {x, w, b},
      {strides_, padding_, dilation_, groups_, std::string(ops::activation_name(post_op))})[0];
  return fused_relu ? y : activate(y, activation_);
}

std::string Conv2D::describe() const {
  const int64_t in = weight_->shape()[1] * groups_;
  return fmt::format("Conv2D({} -> {}, kernel=({}), stride=({}), padding=({}){})",
                     in == 0 ? "None" : std::to_string(in), channels_, fmt::join(kernel_, ", "),
                     fmt::join(strides_, ", "), fmt::join(padding_, ", "),
                     activation_ == ops::Activation::kNone
                         ? ""
                         : ", " + std::string(ops::activation_name(activation_)));
}

MaxPool2D::MaxPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding)
    : Block("pool"),
      pool_(std::move(pool_size)),
      strides_(std::move(strides)),
      padding_(std::move(padding)) {}

NDArray MaxPool2D::forward(const NDArray& x) {
  check_image(*this, x);
  return max_pool2d(x, pool_, strides_, padding_);
}

std::string MaxPool2D::describe() const {
  return fmt::format("MaxPool2D(size=({}), stride=({}), padding=({}))", fmt::join(pool_, ", "),
                     fmt::join(strides_.empty() ? pool_ : strides_, ", "),
                     fmt::join(padding_, ", "));
}

AvgPool2D::AvgPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                     std::vector<int64_t> padding, bool count_include_pad)
    : Block("pool"),
      pool_(std::move(pool_size)),
      strides_(std::move(strides)),
      padding_(std::move(padding)),
      count_include_pad_(count_include_pad) {}

NDArray AvgPool2D::forward(const NDArray& x) {
  check_image(*this, x);
  return avg_pool2d(x, pool_, strides_, padding_, count_include_pad_);
}

std::string AvgPool2D::describe() const {
  return fmt::format("AvgPool2D(size=({}), stride=({}), padding=({}))", fmt::join(pool_, ", "),
                     fmt::join(strides_.empty() ? pool_ : strides_, ", "),
                     fmt::join(padding_, ", "));
}

GlobalAvgPool2D::GlobalAvgPool2D() : Block("pool") {}

NDArray GlobalAvgPool2D::forward(const NDArray& x) {
  check_image(*this, x);
  return mean(x, {2, 3}, /*keepdims=*/true);
}

}  // namespace janus::nn
