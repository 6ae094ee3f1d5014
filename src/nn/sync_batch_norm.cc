// SyncBatchNorm: BatchNorm whose training statistics are those of the whole batch across the
// devices of a data-parallel step, exchanged through gated engine operations
// (docs/design/sync_batch_norm.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/gate.h"
#include "janus/graph/trace.h"
#include "janus/nn/layers.h"

namespace janus::nn {
namespace detail {

// x viewed as [outer, channels, inner] around axis 1.
struct Split {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t per_channel() const { return outer * inner; }
  int64_t index(int64_t o, int64_t c, int64_t i) const { return (o * channels + c) * inner + i; }
};

Split split_of(const Shape& s) {
  Split out;
  out.outer = s[0];
  out.channels = s[1];
  for (int64_t d = 2; d < s.ndim(); ++d) out.inner *= s[d];
  return out;
}

// One step of one layer: what each device's call leaves for the others. Every device's
// normalisation and input gradient is a gated operation, opened once every device's partial
// sums are written; those kernels then read the other devices' partials in place (host memory,
// as peer_add reads its peer's array), in device order, so every device computes bitwise the
// same statistics.
struct SyncBatchNormStep {
  std::string layer;  // the layer's name, for messages
  std::vector<Device> devices;
  double momentum = 0.9, eps = 1e-5;
  // Forward, guarded by the layer's mutex while the step is the layer's current one.
  std::vector<uint8_t> called;
  int arrived = 0;
  std::vector<int64_t> count;  // per device: its slice's values per channel
  std::vector<NDArray> part;   // per device: float64 [2, C], its slice's mean and sum of squares
  std::vector<std::shared_ptr<Gate>> norm_gates;
  // Backward (the second exchange), guarded by bwd_mu: its calls come from backward.
  std::mutex bwd_mu;
  std::vector<uint8_t> bwd_called;
  int bwd_arrived = 0;
  std::vector<NDArray> bpart;  // per device: float64 [2, C], sum(dy) and sum(dy * xhat)
  std::vector<std::shared_ptr<Gate>> bwd_gates;

  int64_t total_count() const {
    int64_t m = 0;
    for (int64_t c : count) m += c;
    return m;
  }

  // The whole batch's mean and biased variance of channel c, from the partials (Chan et al.'s
  // pairwise combination of means and sums of squared deviations, in double, in device order).
  std::pair<double, double> statistics(int64_t c, int64_t channels) const {
    double n = 0, mean = 0, m2 = 0;
    for (size_t j = 0; j < part.size(); ++j) {
      const double* p = part[j].data<double>();
      const double nj = static_cast<double>(count[j]);
      const double delta = p[c] - mean;
      const double total = n + nj;
      mean += delta * nj / total;
      m2 += p[channels + c] + delta * delta * n * nj / total;
      n = total;
    }
    return {mean, m2 / n};
  }

  // The whole batch's sum(dy) and sum(dy * xhat) of channel c, in device order.
  std::pair<double, double> gradient_sums(int64_t c, int64_t channels) const {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (const NDArray& b : bpart) {
      sum_dy += b.data<double>()[c];
      sum_dy_xhat += b.data<double>()[channels + c];
    }
    return {sum_dy, sum_dy_xhat};
  }

  std::string who_called(const std::vector<uint8_t>& flags) const {
    std::vector<Device> yes, no;
    for (size_t k = 0; k < devices.size(); ++k) (flags[k] ? yes : no).push_back(devices[k]);
    return fmt::format("called: [{}], not yet: [{}]", fmt::join(yes, ", "), fmt::join(no, ", "));
  }
};

namespace {

template <typename T>
void partial_statistics(const NDArray& x, const NDArray& part) {
  const Split s = split_of(x.shape());
  const T* xs = x.data<T>();
  double* p = part.data<double>();
  const double m = static_cast<double>(s.per_channel());
  for (int64_t c = 0; c < s.channels; ++c) {
    double total = 0;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) total += static_cast<double>(xs[s.index(o, c, i)]);
    }
    const double mean = total / m;
    double sq = 0;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const double d = static_cast<double>(xs[s.index(o, c, i)]) - mean;
        sq += d * d;
      }
    }
    p[c] = mean;
    p[s.channels + c] = sq;
  }
}

// The arrays of one device's normalisation.
struct NormArgs {
  NDArray x, gamma, beta, y, mean, var;
};

// running = momentum * running + (1 - momentum) * the whole batch's statistics (the biased
// variance, as BatchNorm). Pushed at the last device's call, when every partial is pushed, so
// it is an ordinary operation: an abandoned step leaves the running statistics as they were.
template <typename T>
void update_running(const SyncBatchNormStep& step, const NDArray& running_mean,
                    const NDArray& running_var) {
  const int64_t channels = running_mean.size();
  T* rm = running_mean.data<T>();
  T* rv = running_var.data<T>();
  const double momentum = step.momentum;
  for (int64_t c = 0; c < channels; ++c) {
    const auto [mean, var] = step.statistics(c, channels);
    rm[c] = static_cast<T>(momentum * rm[c] + (1 - momentum) * mean);
    rv[c] = static_cast<T>(momentum * rv[c] + (1 - momentum) * var);
  }
}

// As batch_norm's kernel, with the whole batch's statistics: the same arithmetic, so that one
// device gives BatchNorm's numbers.
template <typename T>
void normalise(const SyncBatchNormStep& step, const NormArgs& a) {
  const Split s = split_of(a.x.shape());
  const T* x = a.x.data<T>();
  const T* gamma = a.gamma.data<T>();
  const T* beta = a.beta.data<T>();
  T* y = a.y.data<T>();
  T* mean_out = a.mean.data<T>();
  T* var_out = a.var.data<T>();
  for (int64_t c = 0; c < s.channels; ++c) {
    const auto [mean, var] = step.statistics(c, s.channels);
    mean_out[c] = static_cast<T>(mean);
    var_out[c] = static_cast<T>(var);
    const double scale = static_cast<double>(gamma[c]) / std::sqrt(var + step.eps);
    const T k = static_cast<T>(scale);
    const T b = static_cast<T>(static_cast<double>(beta[c]) - mean * scale);
    for (int64_t o = 0; o < s.outer; ++o) {
      const T* xr = x + s.index(o, c, 0);
      T* yr = y + s.index(o, c, 0);
      for (int64_t i = 0; i < s.inner; ++i) yr[i] = xr[i] * k + b;
    }
  }
}

// This device's sum(dy) and sum(dy * xhat) (xhat with the whole batch's statistics), into its
// partial and, cast, into its gamma and beta gradients: a replica's share, which the Trainer's
// allreduce sums as it sums every other parameter's.
template <typename T>
void partial_gradient_sums(const NDArray& x, const NDArray& dy, const NDArray& mean,
                           const NDArray& var, double eps, const NDArray& bpart,
                           const NDArray& dgamma, const NDArray& dbeta) {
  const Split s = split_of(x.shape());
  const T* xs = x.data<T>();
  const T* dys = dy.data<T>();
  double* b = bpart.data<double>();
  for (int64_t c = 0; c < s.channels; ++c) {
    const double mu = mean.data<T>()[c];
    const double rstd = 1.0 / std::sqrt(static_cast<double>(var.data<T>()[c]) + eps);
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t k = s.index(o, c, i);
        sum_dy += static_cast<double>(dys[k]);
        sum_dy_xhat += static_cast<double>(dys[k]) * (static_cast<double>(xs[k]) - mu) * rstd;
      }
    }
    b[c] = sum_dy;
    b[s.channels + c] = sum_dy_xhat;
    dbeta.data<T>()[c] = static_cast<T>(sum_dy);
    dgamma.data<T>()[c] = static_cast<T>(sum_dy_xhat);
  }
}

// batch_norm_backward's dx (training, no gradient through the mean and var outputs), with the
// whole batch's count and sums.
template <typename T>
void input_gradient(const SyncBatchNormStep& step, const NDArray& x, const NDArray& dy,
                    const NDArray& gamma, const NDArray& mean, const NDArray& var,
                    const NDArray& dx) {
  const Split s = split_of(x.shape());
  const double m = static_cast<double>(step.total_count());
  const T* xs = x.data<T>();
  const T* dys = dy.data<T>();
  T* dxs = dx.data<T>();
  for (int64_t c = 0; c < s.channels; ++c) {
    const auto [sum_dy, sum_dy_xhat] = step.gradient_sums(c, s.channels);
    const double mu = mean.data<T>()[c];
    const double rstd = 1.0 / std::sqrt(static_cast<double>(var.data<T>()[c]) + step.eps);
    const double g = static_cast<double>(gamma.data<T>()[c]) * rstd;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t k = s.index(o, c, i);
        const double centered = static_cast<double>(xs[k]) - mu;
        dxs[k] = static_cast<T>(g / m * (m * dys[k] - sum_dy - centered * rstd * sum_dy_xhat));
      }
    }
  }
}

template <typename F>
void dispatch_float(DType dtype, F f) {
  if (dtype == DType::kFloat64) {
    f(double{});
  } else {
    f(float{});
  }
}

std::vector<Var*> vars_of(const std::vector<NDArray>& arrays) {
  std::vector<Var*> vars;
  for (const NDArray& a : arrays) vars.push_back(a.var());
  return vars;
}

std::string abandon_message(const SyncBatchNormStep& step, std::string_view what) {
  return fmt::format(
      "{}: {} of a step was abandoned before every one of its {} devices had called ({}); in a "
      "data-parallel step call it on every device (and run backward on every device) before "
      "reading any result",
      step.layer, what, step.devices.size(), step.who_called(step.called));
}

// The backward of device k's call: pushes its partial sums and its gated input gradient; the
// last device's backward opens every device's gate.
std::vector<NDArray> sync_backward(const std::shared_ptr<SyncBatchNormStep>& step, size_t k,
                                   const NDArray& mean, const NDArray& var,
                                   const ops::GradArgs& g) {
  const NDArray& x = g.x(0);
  const NDArray& gamma = g.x(1);
  const NDArray& dy = g.dy(0);
  const Device d = x.device();
  std::lock_guard lock(step->bwd_mu);
  JANUS_CHECK(!step->bwd_called[k], ValueError,
              "{}: backward reached its call on {} twice in one step ({}); each device's "
              "backward runs once per step",
              step->layer, d, step->who_called(step->bwd_called));
  const int64_t channels = x.shape()[1];
  step->bwd_called[k] = 1;
  ++step->bwd_arrived;
  NDArray bpart = empty(Shape{2, channels}, DType::kFloat64, d);
  step->bpart[k] = bpart;
  NDArray dgamma = empty(Shape{channels}, x.dtype(), d);
  NDArray dbeta = empty(Shape{channels}, x.dtype(), d);
  const double eps = step->eps;
  Var* const reads[] = {x.var(), dy.var(), mean.var(), var.var()};
  Var* const writes[] = {bpart.var(), dgamma.var(), dbeta.var()};
  engine().push(
      [=](const RunContext&) {
        dispatch_float(x.dtype(), [&](auto t) {
          partial_gradient_sums<decltype(t)>(x, dy, mean, var, eps, bpart, dgamma, dbeta);
        });
      },
      reads, writes, d, Lane::kCompute, 0, "sync_batch_norm_grad_sums");
  NDArray dx = empty(x.shape(), x.dtype(), d);
  Var* const dx_reads[] = {x.var(), dy.var(), gamma.var(), mean.var(), var.var()};
  Var* const dx_writes[] = {dx.var()};
  const SyncBatchNormStep* s = step.get();
  step->bwd_gates[k] = push_gated(
      engine(),
      [step, x, dy, gamma, mean, var, dx](const RunContext&) {
        dispatch_float(x.dtype(), [&](auto t) {
          input_gradient<decltype(t)>(*step, x, dy, gamma, mean, var, dx);
        });
      },
      dx_reads, dx_writes, d, Lane::kCompute, "sync_batch_norm_backward",
      abandon_message(*s, "the backward"));
  if (step->bwd_arrived == static_cast<int>(step->devices.size())) {
    const std::vector<Var*> parts = vars_of(step->bpart);
    for (const std::shared_ptr<Gate>& gate : step->bwd_gates) gate->open_after(parts);
    step->bwd_gates.clear();
  }
  return {dx, dgamma, dbeta};
}

}  // namespace
}  // namespace detail

SyncBatchNorm::SyncBatchNorm(int64_t in_channels, int64_t num_devices, double momentum,
                             double epsilon, bool center, bool scale, bool use_global_stats)
    : BatchNorm(1, momentum, epsilon, center, scale, in_channels, use_global_stats),
      num_devices_(num_devices) {
  JANUS_CHECK(num_devices >= 0, ValueError,
              "SyncBatchNorm: num_devices is {}, expected a positive number (or 0: the number "
              "of devices its parameters have replicas on)",
              num_devices);
}

SyncBatchNorm::~SyncBatchNorm() = default;

NDArray SyncBatchNorm::forward(const NDArray& x) {
  if (!autograd::is_training() || use_global_stats()) return BatchNorm::forward(x);
  JANUS_CHECK(x.ndim() >= 2, ShapeError,
              "{}: input has shape {}, expected at least 2 dimensions with channels on axis 1",
              name(), x.shape());
  for (const ParameterPtr& p : {gamma(), beta(), running_mean(), running_var()}) {
    if (!p->initialized()) {
      p->infer_shape(Shape{x.shape()[1]});
      p->finish_deferred_init();
    }
  }
  const std::vector<Device>& devices = running_mean()->devices();
  const int64_t n = static_cast<int64_t>(devices.size());
  JANUS_CHECK(num_devices_ == 0 || num_devices_ == n, ValueError,
              "{}: num_devices is {} but its parameters have replicas on {} device(s) ({}); "
              "expected num_devices={} or 0 (the replicas' count)",
              name(), num_devices_, n, fmt::join(devices, ", "), n);
  if (n == 1) return BatchNorm::forward(x);
  JANUS_CHECK(!graph::is_tracing() && !x.is_placeholder(), NotImplementedError,
              "{}: training across {} devices does not hybridize (the statistics exchange "
              "between the devices' calls is not a graph operator); call the block without "
              "hybridize() for training, hybridized inference works",
              name(), n);
  JANUS_CHECK(engine().kind() == EngineKind::kThreaded, NotImplementedError,
              "{}: training across {} devices needs the threaded engine (a device's output is "
              "written once the last device has called, which the naive engine, running each "
              "operation when it is pushed, cannot do); unset JANUS_ENGINE=naive",
              name(), n);
  JANUS_CHECK(x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", name(), x.dtype());
  const Device d = x.device();
  const auto at = std::ranges::find(devices, d);
  JANUS_CHECK(at != devices.end(), DeviceError,
              "{}: input is on {}, but its parameters have replicas on {} only", name(), d,
              fmt::join(devices, ", "));
  JANUS_CHECK(d.is_cpu(), NotImplementedError,
              "{}: training across devices reads the other devices' partial sums in place, "
              "which only CPU devices allow; input is on {}",
              name(), d);
  JANUS_CHECK(gamma()->data(d).dtype() == x.dtype(), TypeError,
              "{}: input is {} but its parameters are {}, expected one dtype", name(), x.dtype(),
              gamma()->data(d).dtype());
  const size_t k = static_cast<size_t>(at - devices.begin());
  const int64_t channels = x.shape()[1];
  JANUS_CHECK(channels == gamma()->shape()[0], ShapeError,
              "{}: input of shape {} has {} channels on axis 1, expected {}", name(), x.shape(),
              channels, gamma()->shape()[0]);
  const detail::Split split = detail::split_of(x.shape());
  JANUS_CHECK(split.per_channel() >= 1, ShapeError,
              "{}: input of shape {} on {} has no values per channel, expected at least one",
              name(), x.shape(), d);

  std::lock_guard lock(mu_);
  // A step whose gates opened before every device called was abandoned (a wait on its thread):
  // its outputs failed, and the next call starts afresh.
  if (step_ && std::ranges::any_of(step_->norm_gates, [](const std::shared_ptr<Gate>& g) {
        return g && g->is_settled();
      })) {
    step_.reset();
  }
  if (!step_) {
    step_ = std::make_shared<detail::SyncBatchNormStep>();
    step_->layer = name();
    step_->devices = devices;
    step_->momentum = momentum();
    step_->eps = epsilon();
    const size_t nd = devices.size();
    step_->called.assign(nd, 0);
    step_->count.assign(nd, 0);
    step_->part.resize(nd);
    step_->norm_gates.resize(nd);
    step_->bwd_called.assign(nd, 0);
    step_->bpart.resize(nd);
    step_->bwd_gates.resize(nd);
  }
  const std::shared_ptr<detail::SyncBatchNormStep> step = step_;
  JANUS_CHECK(!step->called[k], ValueError,
              "{}: {} called twice in one step ({}); in a data-parallel step every device "
              "calls the layer once before any device calls it again",
              name(), d, step->who_called(step->called));
  step->called[k] = 1;
  ++step->arrived;
  step->count[k] = split.per_channel();
  NDArray part = empty(Shape{2, channels}, DType::kFloat64, d);
  step->part[k] = part;
  Var* const part_reads[] = {x.var()};
  Var* const part_writes[] = {part.var()};
  engine().push(
      [x, part](const RunContext&) {
        detail::dispatch_float(x.dtype(),
                               [&](auto t) { detail::partial_statistics<decltype(t)>(x, part); });
      },
      part_reads, part_writes, d, Lane::kCompute, 0, "sync_batch_norm_sums");

  detail::NormArgs a{x,
                     gamma_or_ones(d),
                     beta()->data(d),
                     empty(x.shape(), x.dtype(), d),
                     empty(Shape{channels}, x.dtype(), d),
                     empty(Shape{channels}, x.dtype(), d)};
  Var* const reads[] = {a.x.var(), a.gamma.var(), a.beta.var()};
  Var* const writes[] = {a.y.var(), a.mean.var(), a.var.var()};
  step->norm_gates[k] = push_gated(
      engine(),
      [step, a](const RunContext&) {
        detail::dispatch_float(a.x.dtype(),
                               [&](auto t) { detail::normalise<decltype(t)>(*step, a); });
      },
      reads, writes, d, Lane::kCompute, "sync_batch_norm",
      detail::abandon_message(*step, "the forward"));
  if (step->arrived == static_cast<int>(devices.size())) {
    const std::vector<Var*> parts = detail::vars_of(step->part);
    for (const std::shared_ptr<Gate>& gate : step->norm_gates) gate->open_after(parts);
    step->norm_gates.clear();
    for (size_t j = 0; j < devices.size(); ++j) {
      const NDArray rm = running_mean()->data(devices[j]);
      const NDArray rv = running_var()->data(devices[j]);
      Var* const running[] = {rm.var(), rv.var()};
      engine().push(
          [step, rm, rv](const RunContext&) {
            detail::dispatch_float(
                rm.dtype(), [&](auto t) { detail::update_running<decltype(t)>(*step, rm, rv); });
          },
          parts, running, devices[j], Lane::kCompute, 0, "sync_batch_norm_running");
    }
    step_.reset();  // the next call starts the next step
  }
  const NDArray inputs[] = {x, a.gamma, a.beta};
  autograd::record_function("sync_batch_norm", inputs, std::span<const NDArray>(&a.y, 1),
                            [step, k, mean = a.mean, var = a.var](const ops::GradArgs& g) {
                              return detail::sync_backward(step, k, mean, var, g);
                            });
  return a.y;
}

std::string SyncBatchNorm::describe() const { return "Sync" + BatchNorm::describe(); }

}  // namespace janus::nn
