// Accuracy and mean loss, accumulated on the engine.
#include "janus/nn/metric.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

// `x` as int64: itself when it is already (argmax's indices are), without an operation.
NDArray as_int64(const NDArray& x) {
  return x.dtype() == DType::kInt64 ? x : cast(x, DType::kInt64);
}

bool is_float32_or_64(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

// Of one row of scores: the index of the first NaN, else of the first largest (argmax's).
template <typename T>
int64_t row_argmax(const T* row, int64_t classes) {
  int64_t best = 0;
  if (std::isnan(row[0])) return 0;
  for (int64_t j = 1; j < classes; ++j) {
    if (std::isnan(row[j])) return j;
    if (row[j] > row[best]) best = j;
  }
  return best;
}

// sums[0] += the losses' sum, sums[1] += the rows whose argmax equals the label (as int64).
void add_loss_and_hits(const NDArray& sums, const NDArray& label, const NDArray& pred,
                       const NDArray& loss) {
  double* out = sums.data<double>();
  double total = 0;
  dispatch_dtype(loss.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* l = loss.data<T>();
      for (int64_t i = 0; i < loss.size(); ++i) total += static_cast<double>(l[i]);
    }
  });
  const int64_t rows = pred.shape()[0], classes = pred.shape()[1];
  std::vector<int64_t> labels(static_cast<size_t>(rows));
  dispatch_dtype(label.dtype(), [&]<typename T>() {
    if constexpr (std::is_arithmetic_v<T>) {  // update() sends no float16 or bfloat16 here
      const T* y = label.data<T>();
      for (int64_t i = 0; i < rows; ++i)
        labels[static_cast<size_t>(i)] = static_cast<int64_t>(y[i]);
    }
  });
  int64_t hits = 0;
  dispatch_dtype(pred.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* p = pred.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        hits += row_argmax(p + i * classes, classes) == labels[static_cast<size_t>(i)] ? 1 : 0;
      }
    }
  });
  out[0] += total;
  out[1] += static_cast<double>(hits);
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

void LossAndAccuracy::update(const NDArray& label, const NDArray& pred, const NDArray& loss) {
  JANUS_CHECK(pred.ndim() == 2 && label.size() == pred.shape()[0] && loss.size() == label.size(),
              ShapeError,
              "LossAndAccuracy: {} labels (shape {}) and {} losses (shape {}) for scores of shape "
              "{}, expected scores [batch, classes] and one label and one loss per row",
              label.size(), label.shape(), loss.size(), loss.shape(), pred.shape());
  const Device device = pred.device();
  if (!sums_.defined()) sums_ = zeros({2}, DType::kFloat64, device);
  count_ += label.size();
  const bool fused = device.is_cpu() && label.device() == device && loss.device() == device &&
                     is_float32_or_64(pred.dtype()) && is_float32_or_64(loss.dtype()) &&
                     label.dtype() != DType::kFloat16 && label.dtype() != DType::kBFloat16 &&
                     pred.shape()[1] > 0;
  if (!fused) {
    const NDArray hits = sum(
        cast(equal(argmax(pred, 1), as_int64(reshape(label, {label.size()}))), DType::kFloat64));
    sums_ = add(sums_, stack(sum(cast(loss, DType::kFloat64)), hits));
    return;
  }
  Var* reads[] = {label.var(), pred.var(), loss.var()};
  Var* writes[] = {sums_.var()};
  engine().push([sums = sums_, label, pred,
                 loss](const RunContext&) { add_loss_and_hits(sums, label, pred, loss); },
                reads, writes, device, Lane::kCompute, 0, "loss_and_accuracy");
}

double LossAndAccuracy::mean_loss() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return to_vector<double>(sums_)[0] / static_cast<double>(count_);
}

double LossAndAccuracy::accuracy() const {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return to_vector<double>(sums_)[1] / static_cast<double>(count_);
}

void LossAndAccuracy::reset() {
  sums_ = NDArray();
  count_ = 0;
}

}  // namespace janus::nn
