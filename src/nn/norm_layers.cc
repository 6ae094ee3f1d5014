// BatchNorm, LayerNorm, GroupNorm and InstanceNorm.
#include <fmt/format.h>

#include <utility>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

using autograd::GradReq;

BatchNorm::BatchNorm(int64_t axis, double momentum, double epsilon, bool center, bool scale,
                     int64_t in_channels, bool use_global_stats)
    : Block("batchnorm"),
      axis_(axis),
      momentum_(momentum),
      epsilon_(epsilon),
      use_global_stats_(use_global_stats),
      scale_(scale) {
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
  // use_global_stats: the inference form in training too (the running statistics, not
  // updated); its gradient is that of a scale and shift, as MXNet's.
  const bool batch_stats = autograd::is_training() && !use_global_stats_;
  return batch_norm(x, gamma_or_ones(d), beta_->data(d), running_mean_->data(d),
                    running_var_->data(d), batch_stats, momentum_, epsilon_, axis_);
}

NDArray BatchNorm::gamma_or_ones(Device device) const {
  const NDArray& gamma = gamma_->data(device);
  return scale_ ? gamma : ones(gamma.shape(), gamma.dtype(), device);
}

std::string BatchNorm::describe() const {
  return fmt::format("BatchNorm(axis={}, momentum={}, eps={}, channels={}{})", axis_, momentum_,
                     epsilon_,
                     gamma_->shape()[0] == 0 ? "None" : std::to_string(gamma_->shape()[0]),
                     use_global_stats_ ? ", use_global_stats=True" : "");
}

LayerNorm::LayerNorm(double epsilon, int64_t in_channels, int64_t axis)
    : Block("layernorm"), epsilon_(epsilon), axis_(axis) {
  gamma_ = register_param("gamma", Shape{in_channels}, One());
  beta_ = register_param("beta", Shape{in_channels}, Zero());
}

NDArray LayerNorm::forward(const NDArray& x) {
  const int64_t n = x.ndim();
  JANUS_CHECK(n >= 1 && axis_ >= -n && axis_ < n, ShapeError,
              "{}: axis {} is out of range for an input of shape {}, expected -{} <= axis < {}",
              name(), axis_, x.shape(), n, n);
  const int64_t axis = axis_ < 0 ? axis_ + n : axis_;
  const int64_t d = x.shape()[axis];
  const int64_t expected = gamma_->shape()[0];
  JANUS_CHECK(expected == 0 || expected == d, ShapeError,
              "{}: input of shape {} has {} features on axis {}, expected {}", name(), x.shape(), d,
              axis, expected);
  for (const ParameterPtr& p : {gamma_, beta_}) {
    if (!p->initialized()) {
      p->infer_shape(Shape{d});
      p->finish_deferred_init();
    }
  }
  const NDArray gamma = gamma_->data(x.device()), beta = beta_->data(x.device());
  if (axis == n - 1) return layer_norm(x, gamma, beta, epsilon_);
  // The layer_norm operator normalises the last axis: swap `axis` there and back (a swap is its
  // own inverse).
  std::vector<int64_t> swap(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) swap[static_cast<size_t>(i)] = i;
  std::swap(swap[static_cast<size_t>(axis)], swap.back());
  return transpose(layer_norm(transpose(x, swap), gamma, beta, epsilon_), swap);
}

std::string LayerNorm::describe() const {
  return fmt::format("LayerNorm(axis={}, eps={}, channels={})", axis_, epsilon_,
                     gamma_->shape()[0] == 0 ? "None" : std::to_string(gamma_->shape()[0]));
}

namespace {

// x [N, G, M] normalised over axis 2 per (n, g), then y * gamma[g] + beta[g] for gamma, beta
// [G]: the shared core of GroupNorm (G groups) and InstanceNorm (G channels). The variance is
// the biased one (divided by M), as in MXNet.
NDArray normalize_rows(const NDArray& x, const NDArray& gamma, const NDArray& beta, double eps) {
  const NDArray centered = subtract(x, mean(x, {2}, true));
  const NDArray var = mean(square(centered), {2}, true);
  const NDArray y = mul(centered, rsqrt(add(var, eps)));
  const Shape per_row{1, x.shape()[1], 1};
  return add(mul(y, reshape(gamma, per_row)), reshape(beta, per_row));
}

}  // namespace

GroupNorm::GroupNorm(int64_t num_groups, double epsilon, bool center, bool scale,
                     InitializerPtr beta_init, InitializerPtr gamma_init)
    : Block("groupnorm"), num_groups_(num_groups), epsilon_(epsilon) {
  JANUS_CHECK(num_groups >= 1, ValueError, "GroupNorm: num_groups is {}, expected at least 1",
              num_groups);
  JANUS_CHECK(epsilon > 0, ValueError, "GroupNorm: epsilon is {}, expected a positive value",
              epsilon);
  const Shape g{num_groups};
  gamma_ = register_param("gamma", g, gamma_init ? std::move(gamma_init) : One(),
                          scale ? GradReq::kWrite : GradReq::kNull);
  beta_ = register_param("beta", g, beta_init ? std::move(beta_init) : Zero(),
                         center ? GradReq::kWrite : GradReq::kNull);
}

NDArray GroupNorm::forward(const NDArray& x) {
  JANUS_CHECK(x.ndim() >= 2, ShapeError,
              "{}: input has shape {}, expected [batch, channels, ...] (at least 2 dimensions)",
              name(), x.shape());
  const int64_t channels = x.shape()[1];
  JANUS_CHECK(channels % num_groups_ == 0, ShapeError,
              "{}: input of shape {} has {} channels on axis 1, expected a multiple of "
              "num_groups={}",
              name(), x.shape(), channels, num_groups_);
  for (const ParameterPtr& p : {gamma_, beta_}) {
    if (!p->initialized()) p->finish_deferred_init();
  }
  const int64_t n = x.shape()[0];
  const int64_t per_group = n == 0 ? 0 : x.size() / (n * num_groups_);
  const Device d = x.device();
  const NDArray y = normalize_rows(reshape(x, Shape{n, num_groups_, per_group}), gamma_->data(d),
                                   beta_->data(d), epsilon_);
  return reshape(y, x.shape());
}

std::string GroupNorm::describe() const {
  return fmt::format("GroupNorm(num_groups={}, eps={})", num_groups_, epsilon_);
}

InstanceNorm::InstanceNorm(int64_t axis, double epsilon, bool center, bool scale,
                           InitializerPtr beta_init, InitializerPtr gamma_init, int64_t in_channels)
    : Block("instancenorm"), axis_(axis), epsilon_(epsilon) {
  JANUS_CHECK(epsilon > 0, ValueError, "InstanceNorm: epsilon is {}, expected a positive value",
              epsilon);
  JANUS_CHECK(in_channels >= 0, ValueError,
              "InstanceNorm: in_channels is {}, expected 0 (inferred) or more", in_channels);
  const Shape c{in_channels};
  gamma_ = register_param("gamma", c, gamma_init ? std::move(gamma_init) : One(),
                          scale ? GradReq::kWrite : GradReq::kNull);
  beta_ = register_param("beta", c, beta_init ? std::move(beta_init) : Zero(),
                         center ? GradReq::kWrite : GradReq::kNull);
}

NDArray InstanceNorm::forward(const NDArray& x) {
  const int64_t axis = axis_ < 0 ? axis_ + x.ndim() : axis_;
  JANUS_CHECK(x.ndim() >= 3 && axis >= 1 && axis < x.ndim(), ShapeError,
              "{}: input has shape {}, expected at least 3 dimensions [batch, channels, ...] "
              "with the channel axis {} in 1..ndim-1",
              name(), x.shape(), axis_);
  const int64_t channels = x.shape()[axis];
  const int64_t expected = gamma_->shape()[0];
  JANUS_CHECK(expected == 0 || expected == channels, ShapeError,
              "{}: input of shape {} has {} channels on axis {}, expected {}", name(), x.shape(),
              channels, axis_, expected);
  for (const ParameterPtr& p : {gamma_, beta_}) {
    if (!p->initialized()) {
      p->infer_shape(Shape{channels});
      p->finish_deferred_init();
    }
  }
  // The channel axis moved to 1 (MXNet swaps it there and back).
  std::vector<int64_t> perm(static_cast<size_t>(x.ndim()));
  for (int64_t i = 0; i < x.ndim(); ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[1], perm[static_cast<size_t>(axis)]);
  const NDArray xt = axis == 1 ? x : transpose(x, perm);
  const int64_t n = xt.shape()[0];
  const int64_t rest = n * channels == 0 ? 0 : xt.size() / (n * channels);
  const Device d = x.device();
  const NDArray y = reshape(normalize_rows(reshape(xt, Shape{n, channels, rest}), gamma_->data(d),
                                           beta_->data(d), epsilon_),
                            xt.shape());
  return axis == 1 ? y : transpose(y, perm);
}

std::string InstanceNorm::describe() const {
  return fmt::format("InstanceNorm(axis={}, eps={}, channels={})", axis_, epsilon_,
                     gamma_->shape()[0] == 0 ? "None" : std::to_string(gamma_->shape()[0]));
}

}  // namespace janus::nn
