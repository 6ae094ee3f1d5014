// Autograd: records operator calls on arrays that need gradients and runs them backwards.
// Layer: autograd (uses ops, engine, core).
//
//   NDArray x = random_normal(0, 1, {3});
//   autograd::attach_grad(x);
//   NDArray y;
//   {
//     autograd::RecordScope record;     // like `with autograd.record():`
//     y = sum(x * x);
//   }
//   autograd::backward(y);              // pushes the gradient computation, returns at once
//   std::cout << autograd::grad(x);     // 2 * x
//
// Recording is per thread. Backward itself is not recorded (no higher-order graphs yet).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/ops/registry.h"

namespace janus::autograd {

/// How backward stores a gradient into an array's grad buffer.
enum class GradReq : uint8_t {
  kNull,   // no gradient
  kWrite,  // overwrite
  kAdd,    // accumulate across backward calls
};

/// Records operator calls of this thread while alive. `train_mode` selects training behaviour
/// of dropout and batch norm (is_training()).
class RecordScope {
 public:
  explicit RecordScope(bool train_mode = true);
  ~RecordScope();
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
  bool prev_recording_, prev_training_;
};

/// Stops recording (and leaves training mode) while alive, inside a RecordScope.
class PauseScope {
 public:
  explicit PauseScope(bool train_mode = false);
  ~PauseScope();
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  bool prev_recording_, prev_training_;
};

bool is_recording();
bool is_training();

/// Gives `x` a zero-filled gradient buffer of its shape and marks it as needing gradients.
/// `kNull` removes the mark. Throws TypeError for non-floating dtypes.
void attach_grad(const NDArray& x, GradReq req = GradReq::kWrite);

/// The gradient buffer of `x`; throws ValueError when attach_grad was not called on it.
NDArray grad(const NDArray& x);

/// Records, while recording, a computation made outside the operator registry (a hybridized
/// block's compiled graph) as one node: backward reaches `inputs` from `outputs` through
/// `grad`, which gets the inputs, outputs and output gradients and returns one gradient per
/// input (undefined for an input without one). Does nothing when no input needs a gradient.
void record_function(std::string name, std::span<const NDArray> inputs,
                     std::span<const NDArray> outputs, ops::GradFn grad);

/// The gradient buffer that backward overwrites for `x` (an array given attach_grad with
/// kWrite), else an undefined array. A function recorded with `x` as an input (record_function)
/// may write x's gradient straight into it and return that buffer itself: backward then leaves
/// it as it is instead of copying the gradient in, and adds any other contribution to it. Only
/// one function of a backward pass may write it: its gradient rule first calls
/// claim_grad_buffer, and writes a fresh array when that says no.
NDArray overwritten_grad(const NDArray& x);

/// Inside a gradient rule that backward is running: true the first time this pass asks for
/// `buffer` (from overwritten_grad), which the caller may then write; false afterwards (another
/// function of the pass wrote it: a block called twice while recording) and outside backward.
bool claim_grad_buffer(const NDArray& buffer);

/// True when `x` was given a gradient buffer or comes from a recorded operation on one.
bool requires_grad(const NDArray& x);

/// The same data without autograd history: operations on it are not recorded.
NDArray detach(const NDArray& x);

/// Computes the gradients of `heads` with respect to every array marked by attach_grad that
/// they depend on, and stores them by each array's GradReq. `head_grads` are the gradients of
/// the heads (ones when empty or undefined). Without `retain_graph`, the recorded graph is freed
/// and a second backward through it raises ValueError. Raises ValueError when a head has no
/// recorded history, and NotImplementedError when backward reaches an operator that is not
/// differentiable. Runs asynchronously like any operator.
void backward(std::span<const NDArray> heads, std::span<const NDArray> head_grads = {},
              bool retain_graph = false);
inline void backward(const NDArray& head, bool retain_graph = false) {
  backward(std::span<const NDArray>(&head, 1), {}, retain_graph);
}

}  // namespace janus::autograd
