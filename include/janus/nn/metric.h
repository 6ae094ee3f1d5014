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

/// The mean loss and the accuracy of a classifier together: per update, the per-sample losses
/// [batch] and the scores [batch, classes] with their labels [batch]. The same figures as a
/// MeanLoss and an Accuracy updated with the same arrays, but on a host device from one engine
/// operation per update instead of nine (cast, sum and add for the loss; argmax, two casts,
/// equal, sum and add for the accuracy), each a push on the caller's thread and a dispatch on
/// the device's worker: a training loop's per-batch overhead. Elsewhere, or for scores or
/// losses that are not float32 or float64, it runs the nine operations.
class LossAndAccuracy {
 public:
  void update(const NDArray& label, const NDArray& pred, const NDArray& loss);
  /// NaN before the first update; each waits for the last update.
  double mean_loss() const;
  double accuracy() const;
  /// The samples seen.
  int64_t count() const { return count_; }
  void reset();

 private:
  NDArray sums_;  // float64 [2]: the losses' sum, the correct predictions; on the scores' device
  int64_t count_ = 0;
};

}  // namespace janus::nn
