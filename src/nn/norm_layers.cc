// BatchNorm and LayerNorm.
#include <fmt/format.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

using autograd::GradReq;

BatchNorm::BatchNorm(int64_t axis, double momentum, double epsilon, bool center, bool scale,
                     int64_t in_channels)
    : Block("batchnorm"), axis_(axis), momentum_(momentum), epsilon_(epsilon) {
  JANUS_CHECK(momentum >= 0 && momentum <= 1, ValueError,
              "BatchNorm: momentum is {}, expected a value in [0, 1]", momentum);
  const Shape c{in_channels};
  gamma_ = register_param("gamma", c, One(), scale ? GradReq::kWrite : GradReq::kNull);
  beta_ = register_param("beta", c, Zero(), center ? GradReq::kWrite : GradReq::kNull);
  running_mean_ = register_param("running_mean", c, Zero(), GradReq::kNull);
  running_var_ = register_param("running_var", c, One(), GradReq::kNull);
}

NDArray BatchNorm::forward(const NDArray& x) {
  const int64_t axis = axis_ < 0 ? axis_ + x.ndim() : axis_;
  JANUS_CHECK(x.ndim() >= 2 && axis >= 0 && axis < x.ndim(), ShapeError,
              "{}: input has shape {}, expected at least 2 dimensions with channel axis {}", name(),
              x.shape(), axis_);
  const int64_t channels = x.shape()[axis];
  const int64_t expected = gamma_->shape()[0];
  JANUS_CHECK(expected == 0 || expected == channels, ShapeError,
              "{}: input of shape {} has {} channels on axis {}, expected {}", name(), x.shape(),
              channels, axis_, expected);
  for (const ParameterPtr& p : {gamma_, beta_, running_mean_, running_var_}) {
    if (!p->initialized()) {
      p->infer_shape(Shape{channels});
      p->finish_deferred_init();
    }
  }
  const Device d = x.device();
  return batch_norm(x, gamma_->data(d), beta_->data(d), running_mean_->data(d),
                    running_var_->data(d), autograd::is_training(), momentum_, epsilon_, axis_);
}

std::string BatchNorm::describe() const {
  return fmt::format("BatchNorm(axis={}, momentum={}, eps={}, channels={})", axis_, momentum_,
                     epsilon_,
                     gamma_->shape()[0] == 0 ? "None" : std::to_string(gamma_->shape()[0]));
}

LayerNorm::LayerNorm(double epsilon, int64_t in_channels) : Block("layernorm"), epsilon_(epsilon) {
  gamma_ = register_param("gamma", Shape{in_channels}, One());
  beta_ = register_param("beta", Shape{in_channels}, Zero());
}

NDArray LayerNorm::forward(const NDArray& x) {
  JANUS_CHECK(x.ndim() >= 1, ShapeError, "{}: input has shape {}, expected at least 1 dimension",
              name(), x.shape());
  const int64_t d = x.shape()[x.ndim() - 1];
  const int64_t expected = gamma_->shape()[0];
  JANUS_CHECK(expected == 0 || expected == d, ShapeError,
              "{}: input of shape {} has {} features on the last axis, expected {}", name(),
              x.shape(), d, expected);
  for (const ParameterPtr& p : {gamma_, beta_}) {
    if (!p->initialized()) {
      p->infer_shape(Shape{d});
      p->finish_deferred_init();
    }
  }
  return layer_norm(x, gamma_->data(x.device()), beta_->data(x.device()), epsilon_);
}

std::string LayerNorm::describe() const {
  return fmt::format("LayerNorm(eps={}, channels={})", epsilon_,
                     gamma_->shape()[0] == 0 ? "None" : std::to_string(gamma_->shape()[0]));
}

}  // namespace janus::nn
