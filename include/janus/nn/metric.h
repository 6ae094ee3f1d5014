// Metrics: running figures over batches. Updates stay on the engine (no wait per batch);
// get() waits. Layer: nn.
#pragma once

#include <cstdint>
#include <string>

#include "janus/core/ndarray.h"

namespace janus::nn {

/// The fraction of samples whose predicted class (argmax over the last axis of scores
/// [batch, classes], or the values themselves for integer predictions [batch]) equals the label.
class Accuracy {
 public:
  void update(const NDArray& label, const NDArray& pred);
  /// NaN before the first update.
  double get() const;
  int64_t count() const { return count_; }
  void reset();

 private:
  NDArray correct_;  // float64 scalar, summed on the engine
  int64_t count_ = 0;
};

/// The mean of per-sample losses over every update.
class MeanLoss {
 public:
  void update(const NDArray& loss);
  double get() const;
  int64_t count() const { return count_; }
  void reset();

 private:
  NDArray total_;
  int64_t count_ = 0;
};

}  // namespace janus::nn
