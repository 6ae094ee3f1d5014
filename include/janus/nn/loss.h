// Losses (Gluon's gluon.loss): each returns the per-sample loss [batch], averaged over the
// other axes; take mean() or sum() of it for a scalar. Layer: nn.
#pragma once

#include <string>

#include "janus/core/ndarray.h"

namespace janus::nn {

class Loss {
 public:
  virtual ~Loss() = default;
  /// The loss of `pred` against `label`, per sample (first axis).
  virtual NDArray operator()(const NDArray& pred, const NDArray& label) const = 0;
  virtual std::string describe() const = 0;
};

/// 0.5 * (pred - label)^2. A label with pred's number of elements is reshaped to pred's shape.
class L2Loss : public Loss {
 public:
  NDArray operator()(const NDArray& pred, const NDArray& label) const override;
  std::string describe() const override { return "L2Loss"; }
};

/// |pred - label|.
class L1Loss : public Loss {
 public:
  NDArray operator()(const NDArray& pred, const NDArray& label) const override;
  std::string describe() const override { return "L1Loss"; }
};

/// -log softmax(pred)[label] for logits [batch, classes] and integer labels [batch] (float
/// labels holding class indices are converted).
class SoftmaxCrossEntropyLoss : public Loss {
 public:
  NDArray operator()(const NDArray& pred, const NDArray& label) const override;
  std::string describe() const override { return "SoftmaxCrossEntropyLoss"; }
};

/// Binary cross-entropy of labels in [0, 1] against logits (or probabilities with
/// `from_sigmoid`), computed without overflow: max(x, 0) - x z + log(1 + exp(-|x|)).
class SigmoidBinaryCrossEntropyLoss : public Loss {
 public:
  explicit SigmoidBinaryCrossEntropyLoss(bool from_sigmoid = false) : from_sigmoid_(from_sigmoid) {}
  NDArray operator()(const NDArray& pred, const NDArray& label) const override;
  std::string describe() const override { return "SigmoidBinaryCrossEntropyLoss"; }

 private:
  bool from_sigmoid_;
};

}  // namespace janus::nn
