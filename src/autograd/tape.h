// The recorded graph: one Node per recorded operator call; each array's AutogradMeta names the
// node (and output) that produced it, or holds its gradient buffer when it is a leaf. Private to
// src/autograd.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/ops/registry.h"

namespace janus {

namespace autograd {
struct Node;
}

/// Defined here, declared in core (NDArray holds a shared_ptr to it).
struct AutogradMeta {
  // Produced by a recorded call: that call and which of its outputs.
  std::shared_ptr<autograd::Node> node;
  int output_index = 0;
  // A leaf (attach_grad): where its gradient goes.
  autograd::GradReq req = autograd::GradReq::kNull;
  NDArray grad;
  bool is_leaf() const { return node == nullptr; }
};

namespace autograd {

struct Node {
  /// The recorded operator, or nullptr for a function recorded by record_function.
  const ops::OpDef* op = nullptr;
  /// record_function's name and gradient rule (empty for operator calls).
  std::string function_name;
  ops::GradFn function_grad;
  ops::Attrs attrs;
  // Data of the call's inputs and outputs (detached: no autograd history, so no cycles).
  std::vector<NDArray> inputs;
  std::vector<NDArray> outputs;
  // Where each input's gradient goes: its AutogradMeta, or null when it needs none.
  std::vector<std::shared_ptr<AutogradMeta>> input_meta;
  // Set by a backward without retain_graph: the saved arrays are gone.
  bool released = false;

  std::string_view name() const { return op != nullptr ? op->name : function_name; }
  const ops::GradFn& grad() const { return op != nullptr ? op->grad : function_grad; }
  bool differentiable() const {
    return op != nullptr ? !op->not_differentiable && op->grad : bool(function_grad);
  }
};

/// True when `meta` leads to an array that needs a gradient.
bool needs_grad(const std::shared_ptr<AutogradMeta>& meta);

}  // namespace autograd
}  // namespace janus
