// How backward computes the input gradients of each recorded node: its operator's rule, or a
// fused step where the recorded calls show a pattern whose gradient one fused operator computes
// in one pass (the imperative counterpart of the graph passes fuse_relu_backward_bias and
// fuse_max_pool_relu_backward, with their bits); and a parameter's gradient written straight
// into its buffer where nothing else contributes to it. Private to src/autograd.
#pragma once

#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "janus/core/ndarray.h"

#include "tape.h"

namespace janus::autograd {

/// The gradient contributions that each recorded output or leaf receives in one backward pass:
/// one per input edge of the pass's nodes, one per head. Keyed by its AutogradMeta.
using GradUses = std::unordered_map<const AutogradMeta*, int>;

/// The steps of one backward pass over `order` (its nodes, consumers first).
///
/// Fused steps, both for a call with a relu post-op (fully_connected or conv2d with activation
/// "relu"), whose own rule then runs without its activation and without the bias:
///  - a fully_connected whose bias needs a gradient: relu_backward_bias(y, dy) gives the
///    gradient before the relu and the bias's in one pass;
///  - a conv2d whose output gets only the gradient of the one max_pool2d that reads it: the
///    pooling's node runs max_pool2d_relu_backward(y, dy_pool), which gives the convolution's
///    gradient before the relu and its bias's, instead of max_pool2d_backward.
///
/// Gradient buffers: a leaf with GradReq::kWrite whose one contribution in the pass comes from
/// one input of one node gets its buffer offered to that node's rule (GradArgs::grad_buffers),
/// or to the fused step that computes it; a rule that writes the gradient there returns the
/// buffer itself, and backward then copies nothing (no grad_write).
class GradSteps {
 public:
  /// `head_grads`: the gradients given for the heads, which rules may read.
  GradSteps(const std::vector<Node*>& order, GradUses uses, std::span<const NDArray> head_grads);

  /// When `node` is a max pooling fused with the convolution before it: pushes the fused call
  /// for the pooled gradient (output_grads[0]; undefined: zeros) and returns the convolution's
  /// node and its output gradient before the relu. Otherwise {nullptr, undefined}.
  std::pair<Node*, NDArray> pool_step(Node* node, const std::vector<NDArray>& output_grads);

  /// The gradients of `node`'s inputs from those of its outputs: its rule, or the fused step.
  std::vector<NDArray> input_grads(Node* node, std::vector<NDArray> output_grads);

 private:
  // Where input `i` of `node` may get its gradient written: its leaf's buffer (see above), or
  // undefined. `output_grads`: the node's, which the buffer must not be.
  NDArray grad_buffer(const Node& node, size_t i, const std::vector<NDArray>& output_grads) const;

  GradUses uses_;
  // The memory of every array that a step of the pass may read (the nodes' inputs and outputs,
  // the head gradients): a gradient buffer there is not written before the pass ends.
  std::unordered_set<const Storage*> read_;
  // max_pool2d node -> the conv2d node whose output it pools.
  std::unordered_map<const Node*, Node*> pool_of_;
  // conv2d node -> its bias gradient, computed by the pooling's fused call.
  std::unordered_map<const Node*, NDArray> bias_grad_;
};

}  // namespace janus::autograd
