// The Optimizer base (learning rate, schedule, per-parameter state and counts) and
// make_optimizer.
#include "janus/optim/optimizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "janus/base/error.h"
#include "janus/ops/ops.h"

namespace janus::optim {

Optimizer::Optimizer(double learning_rate, double wd) : learning_rate_(learning_rate), wd_(wd) {
  JANUS_CHECK(learning_rate >= 0, ValueError,
              "optimizer: learning rate is {}, expected a value >= 0", learning_rate);
  JANUS_CHECK(wd >= 0, ValueError, "optimizer: wd is {}, expected a value >= 0", wd);
}

void Optimizer::update(int index, const NDArray& weight, const NDArray& grad) {
  update(index, std::span<const NDArray>(&weight, 1), std::span<const NDArray>(&grad, 1));
}

void Optimizer::update(int index, std::span<const NDArray> weights,
                       std::span<const NDArray> grads) {
  JANUS_CHECK(index >= 0, IndexError, "{}: parameter index {} is negative", name(), index);
  JANUS_CHECK(!weights.empty() && weights.size() == grads.size(), ValueError,
              "{}: update of parameter {}: {} replicas and {} gradients, expected one gradient "
              "per replica",
              name(), index, weights.size(), grads.size());
  for (size_t k = 0; k < weights.size(); ++k) {
    JANUS_CHECK(weights[k].defined() && grads[k].defined(), ValueError,
                "{}: update of parameter {}: the {}{} is undefined", name(), index,
                weights[k].defined() ? "gradient" : "weight",
                weights.size() > 1 ? fmt::format(" of replica {}", k) : "");
  }
  Slot& slot = slots_[index];
  // The count and the schedule's position move only once the update was accepted.
  const int64_t t = slot.count + 1;
  const int64_t num_update = std::max(num_update_, t);
  const double lr = scheduler_ ? (*scheduler_)(num_update) : learning_rate_;
  // Every replica's state exists before any update: a new one copies replica 0's as it was.
  for (size_t k = 0; k < weights.size(); ++k) replica_state(slot, k, weights[k]);
  for (size_t k = 0; k < weights.size(); ++k) {
    apply(weights[k], grads[k], slot.replicas[k], lr * slot.lr_mult, wd_ * slot.wd_mult, t);
  }
  slot.count = t;
  num_update_ = num_update;
}

std::vector<NDArray>& Optimizer::replica_state(Slot& slot, size_t k, const NDArray& weight) const {
  const size_t n_state = state_names().size();
  if (slot.replicas.size() <= k) slot.replicas.resize(k + 1);
  std::vector<NDArray>& state = slot.replicas[k];
  if (state.size() == n_state) return state;
  state.clear();
  const std::vector<NDArray>& first = slot.replicas[0];
  for (size_t i = 0; i < n_state; ++i) {
    state.push_back(k > 0 && first.size() == n_state
                        ? copyto(first[i], weight.device())
                        : zeros(weight.shape(), weight.dtype(), weight.device()));
  }
  return state;
}

double Optimizer::learning_rate() const {
  return scheduler_ ? (*scheduler_)(num_update_) : learning_rate_;
}

void Optimizer::set_learning_rate(double learning_rate) {
  JANUS_CHECK(scheduler_ == nullptr, ValueError,
              "{}: set_learning_rate: the schedule {} decides the learning rate; change the "
              "schedule (or set_lr_scheduler(nullptr) first)",
              name(), scheduler_->describe());
  JANUS_CHECK(learning_rate >= 0, ValueError, "{}: learning rate is {}, expected a value >= 0",
              name(), learning_rate);
  learning_rate_ = learning_rate;
}

void Optimizer::set_lr_scheduler(LRSchedulerPtr scheduler) {
  scheduler_ = std::move(scheduler);
  if (scheduler_) scheduler_->set_base_lr(learning_rate_);
}

void Optimizer::set_wd(double wd) {
  JANUS_CHECK(wd >= 0, ValueError, "{}: wd is {}, expected a value >= 0", name(), wd);
  wd_ = wd;
}

int64_t Optimizer::update_count(int index) const {
  auto it = slots_.find(index);
  return it == slots_.end() ? 0 : it->second.count;
}

const std::vector<NDArray>& Optimizer::state(int index) const {
  static const std::vector<NDArray> kNone;
  auto it = slots_.find(index);
  return it == slots_.end() || it->second.replicas.empty() ? kNone : it->second.replicas[0];
}

void Optimizer::set_state(int index, std::vector<NDArray> state, int64_t update_count) {
  JANUS_CHECK(state.empty() || state.size() == state_names().size(), ValueError,
              "{}: set_state of parameter {}: got {} arrays, expected {} ({})", name(), index,
              state.size(), state_names().size(), fmt::join(state_names(), ", "));
  JANUS_CHECK(update_count >= 0, ValueError, "{}: update count {} is negative", name(),
              update_count);
  Slot& slot = slots_[index];  // its multipliers stay
  slot.replicas.clear();
  slot.replicas.push_back(std::move(state));
  slot.count = update_count;
  num_update_ = std::max(num_update_, update_count);
}

void Optimizer::set_mults(int index, double lr_mult, double wd_mult) {
  JANUS_CHECK(std::isfinite(lr_mult) && lr_mult >= 0 && std::isfinite(wd_mult) && wd_mult >= 0,
              ValueError,
              "{}: parameter {} has lr_mult {} and wd_mult {}, expected finite numbers >= 0",
              name(), index, lr_mult, wd_mult);
  Slot& slot = slots_[index];
  slot.lr_mult = lr_mult;
  slot.wd_mult = wd_mult;
}

void Optimizer::set_num_update(int64_t num_update) {
  JANUS_CHECK(num_update >= 0, ValueError, "{}: num_update {} is negative", name(), num_update);
  num_update_ = num_update;
}

void Optimizer::reset() {
  slots_.clear();
  num_update_ = 0;
}

OptimizerPtr make_optimizer(std::string_view name, double learning_rate,
                            const OptimizerOptions& options) {
  std::string key(name);
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  OptimizerPtr opt;
  if (key == "sgd") {
    opt = std::make_shared<SGD>(learning_rate, options.momentum, options.wd);
  } else if (key == "adam") {
    opt = std::make_shared<Adam>(learning_rate, options.beta1, options.beta2, options.epsilon,
                                 options.wd);
  } else {
    JANUS_THROW(ValueError, "make_optimizer: unknown optimizer '{}', expected one of: sgd, adam",
                name);
  }
  opt->set_clip_gradient(options.clip_gradient);
  opt->set_lr_scheduler(options.lr_scheduler);
  return opt;
}

}  // namespace janus::optim
