// ctc_loss(logits, labels, data_lengths, label_lengths): Connectionist Temporal Classification
// loss (Graves et al. 2006) with the blank the last class, as MXNet's CTCLoss with
// blank_label='last'; ctc_loss_backward gives its gradient with respect to the logits.
#include "janus/ops/ctc_loss.h"

#include <cmath>
#include <vector>

#include "janus/ops/ops.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// log(exp(a) + exp(b)) without overflow; -inf when both are.
double log_add(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

// Any numeric array as doubles (labels and lengths may be float, as in MXNet, or int).
std::vector<double> as_doubles(const NDArray& x) {
  std::vector<double> out(static_cast<size_t>(x.size()));
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* p = x.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  });
  return out;
}

// The batch's sizes and one sequence's checked lengths and labels.
struct CtcProblem {
  int64_t t_max, n, c, l_max;
  std::vector<double> labels, data_lengths, label_lengths;

  explicit CtcProblem(const KernelArgs& args)
      : t_max(args.in(0).shape()[0]),
        n(args.in(0).shape()[1]),
        c(args.in(0).shape()[2]),
        l_max(args.in(1).shape()[1]),
        labels(as_doubles(args.in(1))),
        data_lengths(as_doubles(args.in(2))),
        label_lengths(as_doubles(args.in(3))) {}

  int64_t steps(int64_t b) const {
    const double t = data_lengths[static_cast<size_t>(b)];
    JANUS_CHECK(t >= 0 && t <= static_cast<double>(t_max) && t == std::floor(t), ValueError,
                "ctc_loss: data length {} of sequence {} is not a whole number in [0, {}]", t, b,
                t_max);
    return static_cast<int64_t>(t);
  }
  // Sequence b's labels, checked: each in [0, C - 1) (C - 1 is the blank).
  std::vector<int64_t> label(int64_t b) const {
    const double len = label_lengths[static_cast<size_t>(b)];
    JANUS_CHECK(len >= 0 && len <= static_cast<double>(l_max) && len == std::floor(len), ValueError,
                "ctc_loss: label length {} of sequence {} is not a whole number in "
                "[0, {}]",
                len, b, l_max);
    std::vector<int64_t> out;
    for (int64_t j = 0; j < static_cast<int64_t>(len); ++j) {
      const double v = labels[static_cast<size_t>(b * l_max + j)];
      JANUS_CHECK(v >= 0 && v < static_cast<double>(c - 1) && v == std::floor(v), ValueError,
                  "ctc_loss: label {} at [{}, {}] is out of range, expected a class in [0, {}) "
                  "(class {} is the blank)",
                  v, b, j, c - 1, c - 1);
      out.push_back(static_cast<int64_t>(v));
    }
    return out;
  }
};

// One sequence: log-softmax of its steps, the forward (alpha) and backward (beta) variables
// over the label with blanks between and around (2 L + 1 states), all in log space.
struct CtcLattice {
  int64_t steps, states, c;
  std::vector<int64_t> ext;         // blank, l1, blank, l2, ..., blank
  std::vector<double> logp;         // [steps, c]
  std::vector<double> alpha, beta;  // [steps, states]
  double log_likelihood = -INFINITY;

  template <typename T>
  CtcLattice(const T* x, int64_t n, int64_t b, int64_t steps_, int64_t c_,
             const std::vector<int64_t>& label, bool with_beta)
      : steps(steps_), states(2 * static_cast<int64_t>(label.size()) + 1), c(c_) {
    const int64_t blank = c - 1;
    for (int64_t l : label) {
      ext.push_back(blank);
      ext.push_back(l);
    }
    ext.push_back(blank);
    logp.resize(static_cast<size_t>(steps * c));
    for (int64_t t = 0; t < steps; ++t) {
      const T* row = x + (t * n + b) * c;
      double mx = -INFINITY;
      for (int64_t k = 0; k < c; ++k) mx = std::max(mx, static_cast<double>(row[k]));
      double total = 0;
      for (int64_t k = 0; k < c; ++k) total += std::exp(static_cast<double>(row[k]) - mx);
      const double lse = mx + std::log(total);
      for (int64_t k = 0; k < c; ++k) logp[t * c + k] = static_cast<double>(row[k]) - lse;
    }
    if (steps == 0) {
      log_likelihood = label.empty() ? 0.0 : -INFINITY;
      return;
    }
    alpha.assign(static_cast<size_t>(steps * states), -INFINITY);
    alpha[0] = lp(0, 0);
    if (states > 1) alpha[1] = lp(0, 1);
    for (int64_t t = 1; t < steps; ++t) {
      for (int64_t s = 0; s < states; ++s) {
        double a = at(alpha, t - 1, s);
        if (s >= 1) a = log_add(a, at(alpha, t - 1, s - 1));
        if (skips(s)) a = log_add(a, at(alpha, t - 1, s - 2));
        alpha[t * states + s] = a == -INFINITY ? a : a + lp(t, s);
      }
    }
    log_likelihood = at(alpha, steps - 1, states - 1);
    if (states > 1) log_likelihood = log_add(log_likelihood, at(alpha, steps - 1, states - 2));
    if (!with_beta) return;
    beta.assign(static_cast<size_t>(steps * states), -INFINITY);
    beta[(steps - 1) * states + states - 1] = lp(steps - 1, states - 1);
    if (states > 1) beta[(steps - 1) * states + states - 2] = lp(steps - 1, states - 2);
    for (int64_t t = steps - 2; t >= 0; --t) {
      for (int64_t s = 0; s < states; ++s) {
        double v = at(beta, t + 1, s);
        if (s + 1 < states) v = log_add(v, at(beta, t + 1, s + 1));
        if (s + 2 < states && skips(s + 2)) v = log_add(v, at(beta, t + 1, s + 2));
        beta[t * states + s] = v == -INFINITY ? v : v + lp(t, s);
      }
    }
  }

  double lp(int64_t t, int64_t s) const { return logp[t * c + ext[static_cast<size_t>(s)]]; }
  double at(const std::vector<double>& v, int64_t t, int64_t s) const {
    return v[static_cast<size_t>(t * states + s)];
  }
  // Whether state s may be reached from s - 2 (a label that differs from the one before).
  bool skips(int64_t s) const {
    return s >= 2 && ext[static_cast<size_t>(s)] != ext[static_cast<size_t>(s - 2)];
  }
};

template <typename T>
void ctc_forward(const KernelArgs& args, const CtcProblem& p) {
  const T* x = args.in(0).data<T>();
  T* loss = args.out(0).data<T>();
  for (int64_t b = 0; b < p.n; ++b) {
    const CtcLattice lat(x, p.n, b, p.steps(b), p.c, p.label(b), /*with_beta=*/false);
    // No alignment (too few steps for the label and its repeats): 0, as MXNet (warp-ctc) gives.
    loss[b] = lat.log_likelihood == -INFINITY ? T(0) : static_cast<T>(-lat.log_likelihood);
  }
}

// d loss / d x[t, b, k] = softmax_k - sum over states s labelled k of alpha beta / (p y_k),
// scaled by dy[b]; zero past a sequence's length and for a label without an alignment.
template <typename T>
void ctc_backward(const KernelArgs& args, const CtcProblem& p) {
  const T* x = args.in(0).data<T>();
  const std::vector<double> dy = as_doubles(args.in(4));
  T* dx = args.out(0).data<T>();
  std::fill_n(dx, p.t_max * p.n * p.c, from_double<T>(0));
  for (int64_t b = 0; b < p.n; ++b) {
    const CtcLattice lat(x, p.n, b, p.steps(b), p.c, p.label(b), /*with_beta=*/true);
    if (lat.log_likelihood == -INFINITY) continue;
    std::vector<double> occupancy(static_cast<size_t>(p.c));
    for (int64_t t = 0; t < lat.steps; ++t) {
      std::fill(occupancy.begin(), occupancy.end(), -INFINITY);
      for (int64_t s = 0; s < lat.states; ++s) {
        double& o = occupancy[static_cast<size_t>(lat.ext[static_cast<size_t>(s)])];
        o = log_add(o, lat.at(lat.alpha, t, s) + lat.at(lat.beta, t, s));
      }
      for (int64_t k = 0; k < p.c; ++k) {
        const double lp = lat.logp[t * p.c + k];
        const double g = std::exp(lp) - std::exp(occupancy[k] - lp - lat.log_likelihood);
        dx[(t * p.n + b) * p.c + k] = static_cast<T>(g * dy[static_cast<size_t>(b)]);
      }
    }
  }
}

void ctc_loss_cpu(const KernelArgs& args) {
  const CtcProblem p(args);
  if (args.in(0).dtype() == DType::kFloat64) {
    ctc_forward<double>(args, p);
  } else {
    ctc_forward<float>(args, p);
  }
}

void ctc_loss_backward_cpu(const KernelArgs& args) {
  const CtcProblem p(args);
  if (args.in(0).dtype() == DType::kFloat64) {
    ctc_backward<double>(args, p);
  } else {
    ctc_backward<float>(args, p);
  }
}

void check_ctc_inputs(std::string_view op, const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  JANUS_CHECK(x.shape.ndim() == 3, ShapeError,
              "{}: logits have shape {}, expected 3 dimensions [T, N, C]", op, x.shape);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "{}: logits have dtype {}, expected float32 or float64", op, x.dtype);
  JANUS_CHECK(x.shape[2] >= 2, ShapeError,
              "{}: logits have shape {}, expected C >= 2 classes (the last is the blank)", op,
              x.shape);
  const int64_t n = x.shape[1];
  const TensorSpec& labels = args.inputs[1];
  JANUS_CHECK(labels.shape.ndim() == 2 && labels.shape[0] == n, ShapeError,
              "{}: labels have shape {} for logits {}, expected [{}, L]", op, labels.shape, x.shape,
              n);
  for (size_t i : {size_t{2}, size_t{3}}) {
    JANUS_CHECK(args.inputs[i].shape == Shape{n}, ShapeError, "{}: {} have shape {}, expected [{}]",
                op, i == 2 ? "data_lengths" : "label_lengths", args.inputs[i].shape, n);
  }
  for (const TensorSpec& t : args.inputs) {
    JANUS_CHECK(t.dtype != DType::kBool, TypeError, "{}: an input has dtype bool, expected numbers",
                op);
  }
}

std::vector<TensorSpec> infer_ctc_loss(const InferArgs& args) {
  check_ctc_inputs("ctc_loss", args);
  const TensorSpec& x = args.inputs[0];
  return {TensorSpec{Shape{x.shape[1]}, x.dtype, x.device}};
}

std::vector<TensorSpec> infer_ctc_loss_backward(const InferArgs& args) {
  check_ctc_inputs("ctc_loss_backward", args);
  const TensorSpec& x = args.inputs[0];
  JANUS_CHECK(args.inputs[4].shape == Shape{x.shape[1]}, ShapeError,
              "ctc_loss_backward: dy has shape {}, expected [{}]", args.inputs[4].shape,
              x.shape[1]);
  return {x};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "ctc_loss",
    .doc = "Per-sequence CTC loss -log p(label | logits) of logits [T, N, C] (softmax over C, "
           "class C - 1 the blank), labels [N, L], data_lengths [N] and label_lengths [N].",
    .inputs = {"logits", "labels", "data_lengths", "label_lengths"},
    .outputs = {"loss"},
    .infer = infer_ctc_loss,
    .kernels = {{DeviceType::kCPU, ctc_loss_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {ctc_loss_backward(g.x(0), g.x(1), g.x(2), g.x(3), g.dy(0)), NDArray(), NDArray(),
              NDArray()};
    },
});

JANUS_DEFINE_OP({
    .name = "ctc_loss_backward",
    .doc = "The gradient of ctc_loss with respect to its logits, for the loss's gradient dy [N].",
    .inputs = {"logits", "labels", "data_lengths", "label_lengths", "dy"},
    .outputs = {"dlogits"},
    .infer = infer_ctc_loss_backward,
    .kernels = {{DeviceType::kCPU, ctc_loss_backward_cpu}},
    .not_differentiable = true,
});

}  // namespace janus::ops

namespace janus {
NDArray ctc_loss(const NDArray& logits, const NDArray& labels, const NDArray& data_lengths,
                 const NDArray& label_lengths) {
  static const ops::OpDef& op = ops::get_op("ctc_loss");
  return ops::invoke(op, {logits, labels, data_lengths, label_lengths})[0];
}

NDArray ctc_loss_backward(const NDArray& logits, const NDArray& labels, const NDArray& data_lengths,
                          const NDArray& label_lengths, const NDArray& dy) {
  static const ops::OpDef& op = ops::get_op("ctc_loss_backward");
  return ops::invoke(op, {logits, labels, data_lengths, label_lengths, dy})[0];
}
}  // namespace janus
