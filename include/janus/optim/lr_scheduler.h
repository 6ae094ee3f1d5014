// Learning-rate schedules (Gluon's mx.lr_scheduler): the learning rate as a function of the
// update number. Layer: optim.
//
//   auto sgd = std::make_shared<optim::SGD>(0.1, 0.9);
//   sgd->set_lr_scheduler(std::make_shared<optim::FactorScheduler>(/*step=*/100, /*factor=*/0.5));
//   // updates 1..100 use 0.1, 101..200 use 0.05, ...
//
// A schedule is a pure function of the update number (no hidden state), so a training run that
// is stopped, saved (Trainer::save_states) and resumed gets the same rates. The optimizer sets
// the schedule's base_lr to its own learning rate when the schedule is attached (as MXNet does).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace janus::optim {

class LRScheduler {
 public:
  explicit LRScheduler(double base_lr = 0.01) : base_lr_(base_lr) {}
  virtual ~LRScheduler() = default;

  /// The learning rate of update number `num_update` (1 for the first update; 0 before any).
  virtual double operator()(int64_t num_update) const = 0;
  /// One line, e.g. "FactorScheduler(step=100, factor=0.5)".
  virtual std::string describe() const = 0;

  double base_lr() const { return base_lr_; }
  void set_base_lr(double lr) { base_lr_ = lr; }

 private:
  double base_lr_;
};

using LRSchedulerPtr = std::shared_ptr<LRScheduler>;

/// base_lr * factor^floor((num_update - 1) / step), never below stop_factor_lr: the rate is
/// multiplied by `factor` after every `step` updates.
class FactorScheduler : public LRScheduler {
 public:
  explicit FactorScheduler(int64_t step, double factor = 1.0, double stop_factor_lr = 1e-8,
                           double base_lr = 0.01);
  double operator()(int64_t num_update) const override;
  std::string describe() const override;

 private:
  int64_t step_;
  double factor_, stop_factor_lr_;
};

/// base_lr * factor^k where k counts the milestones in `steps` (increasing) that num_update has
/// passed: steps {100, 150} gives base_lr for updates 1..100, base_lr * factor for 101..150 and
/// base_lr * factor^2 after.
class MultiFactorScheduler : public LRScheduler {
 public:
  explicit MultiFactorScheduler(std::vector<int64_t> steps, double factor = 1.0,
                                double base_lr = 0.01);
  double operator()(int64_t num_update) const override;
  std::string describe() const override;

 private:
  std::vector<int64_t> steps_;
  double factor_;
};

/// Half a cosine from base_lr down to final_lr over max_update updates, final_lr after; with
/// warmup_steps > 0 the rate first rises linearly from warmup_begin_lr to base_lr.
class CosineScheduler : public LRScheduler {
 public:
  explicit CosineScheduler(int64_t max_update, double base_lr = 0.01, double final_lr = 0.0,
                           int64_t warmup_steps = 0, double warmup_begin_lr = 0.0);
  double operator()(int64_t num_update) const override;
  std::string describe() const override;

 private:
  int64_t max_update_, warmup_steps_;
  double final_lr_, warmup_begin_lr_;
};

/// Any function of the update number: `fn(num_update)` is the rate (base_lr is not used).
class LambdaScheduler : public LRScheduler {
 public:
  explicit LambdaScheduler(std::function<double(int64_t num_update)> fn);
  double operator()(int64_t num_update) const override { return fn_(num_update); }
  std::string describe() const override { return "LambdaScheduler"; }

 private:
  std::function<double(int64_t)> fn_;
};

}  // namespace janus::optim
