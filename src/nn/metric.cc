// Accuracy and mean loss, accumulated on the engine.
#include "janus/nn/metric.h"

#include <cmath>
#include <limits>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

// `x` as int64: itself when it is already (argmax's indices are), without an operation.
NDArray as_int64(const NDArray& x) {
  return x.dtype() == DType::kInt64 ? x : cast(x, DType::kInt64);
}

}  // namespace

void Accuracy::update(const NDArray& label, const NDArray& pred) {
  JANUS_CHECK(pred.ndim() >= 1 && label.size() == pred.shape()[0], ShapeError,
              "Accuracy: {} labels (shape {}) for predictions of shape {}, expected one label per "
              "row",
              label.size(), label.shape(), pred.shape());
  const NDArray predicted =
      pred.ndim() == 1 && !is_floating(pred.dtype()) ? pred : argmax(pred, pred.ndim() - 1);
  const NDArray hits = sum(cast(
      equal(as_int64(predicted), as_int64(reshape(label, predicted.shape()))), DType::kFloat64));
  correct_ = correct_.defined() ? add(correct_, hits) : hits;
  count_ += label.size();
}

double Accuracy::get() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return item<double>(correct_) / static_cast<double>(count_);
}

void Accuracy::reset() {
  correct_ = NDArray();
  count_ = 0;
}

void MeanLoss::update(const NDArray& loss) {
  const NDArray s = sum(cast(loss, DType::kFloat64));
  total_ = total_.defined() ? add(total_, s) : s;
  count_ += loss.size();
}

double MeanLoss::get() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return item<double>(total_) / static_cast<double>(count_);
}

void MeanLoss::reset() {
  total_ = NDArray();
  count_ = 0;
}

}  // namespace janus::nn
