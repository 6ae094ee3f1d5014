// One step of a reverse-mode sweep, shared by the two sweeps: autograd::backward (over the
// recorded tape) and graph::make_gradient_graphs (over a graph, while tracing). Header-only, so
// that the graph layer, and the deploy runtime that links it, need no autograd object.
#pragma once

#include <fmt/format.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "janus/base/error.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

namespace janus::autograd {

/// One recorded or traced operator call, as a reverse sweep sees it.
struct GradStep {
  std::string_view op_name;
  std::string_view node_name;  // a graph node's name, for messages; empty on the tape
  const ops::GradFn& rule;     // empty when the operator is not differentiable
  std::span<const NDArray> inputs;
  std::span<const NDArray> outputs;
  const ops::Attrs& attrs;
  std::span<const uint8_t> needed;  // per input: needs a gradient
  // Per input, where its gradient may be written (ops::GradArgs::grad_buffers); empty: nowhere.
  std::span<const NDArray> grad_buffers = {};
};

namespace detail {
inline std::string describe_grad_step(const GradStep& step) {
  return step.node_name.empty()
             ? fmt::format("operator '{}'", step.op_name)
             : fmt::format("operator '{}' (node '{}')", step.op_name, step.node_name);
}
}  // namespace detail

/// Applies `step`'s gradient rule to the gradients of its outputs (`output_grads`, one per
/// output; an undefined one, which nothing downstream produced, becomes zeros) and returns one
/// gradient per input (undefined where the rule gives none). NotImplementedError naming
/// `sweep` and the operator when the rule is missing.
inline std::vector<NDArray> apply_grad_rule(std::string_view sweep, const GradStep& step,
                                            std::vector<NDArray> output_grads) {
  JANUS_CHECK(static_cast<bool>(step.rule), NotImplementedError,
              "{}: {} is not differentiable, but a head depends on its output through an input "
              "that needs a gradient",
              sweep, detail::describe_grad_step(step));
  JANUS_ASSERT(output_grads.size() == step.outputs.size(),
               "{}: {} got {} output gradients for {} outputs", sweep,
               detail::describe_grad_step(step), output_grads.size(), step.outputs.size());
  for (size_t i = 0; i < output_grads.size(); ++i) {
    const NDArray& y = step.outputs[i];
    if (!output_grads[i].defined()) output_grads[i] = zeros(y.shape(), y.dtype(), y.device());
  }
  std::vector<NDArray> input_grads = step.rule(ops::GradArgs{
      step.inputs, step.outputs, output_grads, step.attrs, step.needed, step.grad_buffers});
  JANUS_ASSERT(input_grads.size() == step.inputs.size(),
               "{}: the gradient of {} returned {} arrays for {} inputs", sweep,
               detail::describe_grad_step(step), input_grads.size(), step.inputs.size());
  return input_grads;
}

/// slot += g, where an undefined slot is zero.
inline void accumulate_grad(NDArray& slot, const NDArray& g) {
  slot = slot.defined() ? add(slot, g) : g;
}

}  // namespace janus::autograd
