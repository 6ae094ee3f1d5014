// The built-in losses, composed of registered operators (so they record, trace and fuse).
#include "janus/nn/loss.h"

#include <numeric>
#include <vector>

#include "janus/base/error.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

// label in pred's shape (Gluon reshapes a label of the same size, e.g. [N] for [N, 1]).
NDArray label_like(const char* loss, const NDArray& pred, const NDArray& label) {
  JANUS_CHECK(pred.ndim() >= 1, ShapeError, "{}: prediction has shape {}, expected [batch, ...]",
              loss, pred.shape());
  if (label.shape() == pred.shape())
    return label.dtype() == pred.dtype() ? label : cast(label, pred.dtype());
  JANUS_CHECK(label.size() == pred.size(), ShapeError,
              "{}: label of shape {} does not match prediction of shape {}", loss, label.shape(),
              pred.shape());
  const NDArray l = reshape(label, pred.shape());
  return l.dtype() == pred.dtype() ? l : cast(l, pred.dtype());
}

// Mean over every axis but the first.
NDArray per_sample(const NDArray& x) {
  if (x.ndim() <= 1) return x;
  std::vector<int64_t> axes(static_cast<size_t>(x.ndim() - 1));
  std::iota(axes.begin(), axes.end(), 1);
  return mean(x, axes);
}

}  // namespace

NDArray L2Loss::operator()(const NDArray& pred, const NDArray& label) const {
  return per_sample(mul(square(subtract(pred, label_like("L2Loss", pred, label))), 0.5));
}

NDArray L1Loss::operator()(const NDArray& pred, const NDArray& label) const {
  return per_sample(abs(subtract(pred, label_like("L1Loss", pred, label))));
}

NDArray SoftmaxCrossEntropyLoss::operator()(const NDArray& pred, const NDArray& label) const {
  JANUS_CHECK(pred.ndim() == 2, ShapeError,
              "SoftmaxCrossEntropyLoss: prediction has shape {}, expected [batch, classes]",
              pred.shape());
  JANUS_CHECK(label.size() == pred.shape()[0], ShapeError,
              "SoftmaxCrossEntropyLoss: label of shape {} for prediction {}, expected [{}] class "
              "indices",
              label.shape(), pred.shape(), pred.shape()[0]);
  NDArray l = label.ndim() == 1 ? label : reshape(label, Shape{pred.shape()[0]});
  if (l.dtype() != DType::kInt32 && l.dtype() != DType::kInt64) l = cast(l, DType::kInt64);
  return softmax_cross_entropy(pred, l);
}

NDArray SigmoidBinaryCrossEntropyLoss::operator()(const NDArray& pred, const NDArray& label) const {
  const NDArray z = label_like("SigmoidBinaryCrossEntropyLoss", pred, label);
  if (from_sigmoid_) {
    constexpr double kEps = 1e-12;
    // -(z log p + (1 - z) log(1 - p))
    const NDArray a = mul(log(add(pred, kEps)), z);
    const NDArray b = mul(log(add(subtract(1.0, pred), kEps)), subtract(1.0, z));
    return per_sample(negative(add(a, b)));
  }
  const NDArray loss =
      add(subtract(maximum(pred, 0.0), mul(pred, z)), log1p(exp(negative(abs(pred)))));
  return per_sample(loss);
}

}  // namespace janus::nn
