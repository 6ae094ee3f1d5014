// Optimizers (Gluon's mx.optimizer): SGD (with momentum) and Adam, each step one in-place
// update operator on the engine (sgd_update, sgd_mom_update, adam_update). Layer: optim.
//
// Usually driven by a Trainer; alone:
//   optim::SGD sgd(/*learning_rate=*/0.1, /*momentum=*/0.9);
//   sgd.update(/*index=*/0, w, autograd::grad(w));   // pushes the update, returns at once
//
// Not thread-safe: one thread drives an optimizer (as one thread drives a training loop).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/optim/lr_scheduler.h"

namespace janus::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// The name make_optimizer takes: "sgd", "adam".
  virtual std::string_view name() const = 0;
  /// One line with the hyperparameters, e.g. "SGD(lr=0.1, momentum=0.9, wd=0)".
  virtual std::string describe() const = 0;
  /// Names of the state arrays each parameter gets, in the order state() holds them
  /// (SGD with momentum: "mom"; Adam: "mean", "var"; plain SGD: none).
  virtual std::vector<std::string> state_names() const = 0;

  /// Updates `weight` in place from `grad` (pushed to the engine; returns at once). Parameter
  /// `index` gets its state (zeros like the weight) on its first update; its update count goes
  /// up by one and the learning rate is that of the schedule at num_update(), times the
  /// parameter's lr_mult (the weight decay times its wd_mult: set_mults).
  void update(int index, const NDArray& weight, const NDArray& grad);
  /// One update of parameter `index` held as replicas on several devices (data parallelism):
  /// replica k of `weights` is updated from `grads[k]` with a state of its own on its device,
  /// and the count goes up once. Replicas given the same gradients stay identical.
  void update(int index, std::span<const NDArray> weights, std::span<const NDArray> grads);

  /// Parameter `index`'s factors on the learning rate and the weight decay (Gluon's lr_mult and
  /// wd_mult; 1 until set). The Trainer sets them from its parameters before each update, so
  /// that an update made elsewhere (a KVStore's) applies them too.
  void set_mults(int index, double lr_mult, double wd_mult);

  /// The current learning rate: the schedule's value at num_update() when there is one.
  double learning_rate() const;
  /// ValueError when a schedule decides the rate (change the schedule instead, as in MXNet).
  void set_learning_rate(double learning_rate);
  /// Attaches a schedule (null: none) and sets its base_lr to the current learning rate.
  void set_lr_scheduler(LRSchedulerPtr scheduler);
  const LRSchedulerPtr& lr_scheduler() const { return scheduler_; }

  double wd() const { return wd_; }
  void set_wd(double wd);
  /// Factor applied to each gradient first (Trainer::step sets it to 1 / batch_size).
  double rescale_grad() const { return rescale_grad_; }
  void set_rescale_grad(double rescale_grad) { rescale_grad_ = rescale_grad; }
  /// Gradients (after rescaling) are clipped to [-c, c] when c > 0.
  double clip_gradient() const { return clip_gradient_; }
  void set_clip_gradient(double clip_gradient) { clip_gradient_ = clip_gradient; }

  /// The largest update count of any parameter (what schedules see).
  int64_t num_update() const { return num_update_; }
  /// How many updates parameter `index` has had (0: none yet).
  int64_t update_count(int index) const;
  /// The state arrays of parameter `index` (of its first replica); empty before its first
  /// update.
  const std::vector<NDArray>& state(int index) const;
  /// Replaces the state and update count of parameter `index` (loading a checkpoint): `state`
  /// holds one array per state_names(), or is empty to create zeros at the next update. Other
  /// replicas start from a copy of it at their next update.
  void set_state(int index, std::vector<NDArray> state, int64_t update_count);
  /// Sets num_update (loading a checkpoint).
  void set_num_update(int64_t num_update);
  /// Forgets every parameter's state and count.
  void reset();

 protected:
  Optimizer(double learning_rate, double wd);

  /// Pushes the update of one parameter with the given rate and weight decay (the parameter's
  /// own, multipliers applied) and its update count t (from 1).
  virtual void apply(const NDArray& weight, const NDArray& grad, std::vector<NDArray>& state,
                     double lr, double wd, int64_t t) = 0;

 private:
  struct Slot {
    std::vector<std::vector<NDArray>> replicas;  // the state of each replica, [0] first
    int64_t count = 0;
    double lr_mult = 1.0;
    double wd_mult = 1.0;
  };
  // The state of replica `k` of `weight`, created (zeros, or a copy of replica 0's) if absent.
  std::vector<NDArray>& replica_state(Slot& slot, size_t k, const NDArray& weight) const;

  double learning_rate_;
  double wd_;
  double rescale_grad_ = 1.0;
  double clip_gradient_ = -1.0;
  LRSchedulerPtr scheduler_;
  int64_t num_update_ = 0;
  std::map<int, Slot> slots_;
};

using OptimizerPtr = std::shared_ptr<Optimizer>;

/// Stochastic gradient descent: w -= lr * g, or with momentum mom = momentum * mom - lr * g,
/// w += mom (MXNet's SGD; PyTorch's SGD for a constant rate). g includes wd * w.
class SGD : public Optimizer {
 public:
  explicit SGD(double learning_rate, double momentum = 0.0, double wd = 0.0);
  std::string_view name() const override { return "sgd"; }
  std::string describe() const override;
  std::vector<std::string> state_names() const override;
  double momentum() const { return momentum_; }

 protected:
  void apply(const NDArray& weight, const NDArray& grad, std::vector<NDArray>& state, double lr,
             double wd, int64_t t) override;

 private:
  double momentum_;
};

/// Adam (Kingma & Ba) with bias correction, as PyTorch computes it: w -= lr * m_hat /
/// (sqrt(v_hat) + epsilon). Weight decay is added to the gradient (L2, not AdamW).
class Adam : public Optimizer {
 public:
  explicit Adam(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                double epsilon = 1e-8, double wd = 0.0);
  std::string_view name() const override { return "adam"; }
  std::string describe() const override;
  std::vector<std::string> state_names() const override { return {"mean", "var"}; }
  double beta1() const { return beta1_; }
  double beta2() const { return beta2_; }
  double epsilon() const { return epsilon_; }

 protected:
  void apply(const NDArray& weight, const NDArray& grad, std::vector<NDArray>& state, double lr,
             double wd, int64_t t) override;

 private:
  double beta1_, beta2_, epsilon_;
};

/// Hyperparameters of make_optimizer beyond the learning rate; each optimizer reads the ones it
/// has (SGD: momentum; Adam: beta1, beta2, epsilon).
struct OptimizerOptions {
  double momentum = 0.0;
  double wd = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double clip_gradient = -1.0;
  LRSchedulerPtr lr_scheduler = nullptr;
};

/// The optimizer called `name` ("sgd" or "adam", any case), as Gluon's Trainer(params, "sgd",
/// {...}) builds it: make_optimizer("sgd", 0.1, {.momentum = 0.9, .wd = 1e-4}). An unknown
/// name is a ValueError listing the valid ones.
OptimizerPtr make_optimizer(std::string_view name, double learning_rate,
                            const OptimizerOptions& options = {});

}  // namespace janus::optim
