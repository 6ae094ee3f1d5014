// Learning-rate schedules: pure functions of the update number.
#include "janus/optim/lr_scheduler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "janus/base/error.h"

namespace janus::optim {

FactorScheduler::FactorScheduler(int64_t step, double factor, double stop_factor_lr, double base_lr)
    : LRScheduler(base_lr), step_(step), factor_(factor), stop_factor_lr_(stop_factor_lr) {
  JANUS_CHECK(step >= 1, ValueError, "FactorScheduler: step is {}, expected at least 1", step);
  JANUS_CHECK(factor > 0 && factor <= 1, ValueError,
              "FactorScheduler: factor is {}, expected a value in (0, 1]", factor);
}

double FactorScheduler::operator()(int64_t num_update) const {
  const int64_t decays = num_update <= 0 ? 0 : (num_update - 1) / step_;
  const double lr = base_lr() * std::pow(factor_, static_cast<double>(decays));
  return std::max(lr, std::min(stop_factor_lr_, base_lr()));
}

std::string FactorScheduler::describe() const {
  return fmt::format("FactorScheduler(step={}, factor={}, stop_factor_lr={}, base_lr={})", step_,
                     factor_, stop_factor_lr_, base_lr());
}

MultiFactorScheduler::MultiFactorScheduler(std::vector<int64_t> steps, double factor,
                                           double base_lr)
    : LRScheduler(base_lr), steps_(std::move(steps)), factor_(factor) {
  for (size_t i = 0; i < steps_.size(); ++i) {
    JANUS_CHECK(steps_[i] >= 1 && (i == 0 || steps_[i] > steps_[i - 1]), ValueError,
                "MultiFactorScheduler: steps {} must be increasing and at least 1",
                fmt::join(steps_, ", "));
  }
  JANUS_CHECK(factor > 0 && factor <= 1, ValueError,
              "MultiFactorScheduler: factor is {}, expected a value in (0, 1]", factor);
}

double MultiFactorScheduler::operator()(int64_t num_update) const {
  const auto passed =
      std::count_if(steps_.begin(), steps_.end(), [&](int64_t s) { return num_update > s; });
  return base_lr() * std::pow(factor_, static_cast<double>(passed));
}

std::string MultiFactorScheduler::describe() const {
  return fmt::format("MultiFactorScheduler(steps=[{}], factor={}, base_lr={})",
                     fmt::join(steps_, ", "), factor_, base_lr());
}

CosineScheduler::CosineScheduler(int64_t max_update, double base_lr, double final_lr,
                                 int64_t warmup_steps, double warmup_begin_lr)
    : LRScheduler(base_lr),
      max_update_(max_update),
      warmup_steps_(warmup_steps),
      final_lr_(final_lr),
      warmup_begin_lr_(warmup_begin_lr) {
  JANUS_CHECK(warmup_steps >= 0 && max_update > warmup_steps, ValueError,
              "CosineScheduler: max_update is {} and warmup_steps {}, expected max_update > "
              "warmup_steps >= 0",
              max_update, warmup_steps);
}

double CosineScheduler::operator()(int64_t num_update) const {
  if (num_update < warmup_steps_) {
    const double frac = static_cast<double>(num_update) / static_cast<double>(warmup_steps_);
    return warmup_begin_lr_ + (base_lr() - warmup_begin_lr_) * frac;
  }
  if (num_update > max_update_) return final_lr_;
  const double frac = static_cast<double>(num_update - warmup_steps_) /
                      static_cast<double>(max_update_ - warmup_steps_);
  return final_lr_ + (base_lr() - final_lr_) * (1 + std::cos(std::numbers::pi * frac)) / 2;
}

std::string CosineScheduler::describe() const {
  return fmt::format("CosineScheduler(max_update={}, base_lr={}, final_lr={}, warmup_steps={})",
                     max_update_, base_lr(), final_lr_, warmup_steps_);
}

LambdaScheduler::LambdaScheduler(std::function<double(int64_t)> fn) : fn_(std::move(fn)) {
  JANUS_CHECK(static_cast<bool>(fn_), ValueError, "LambdaScheduler: the function is empty");
}

}  // namespace janus::optim
