// How backward computes each node's input gradients (grad_steps.h).
#include "grad_steps.h"

#include <algorithm>
#include <string>
#include <utility>

#include "janus/autograd/grad_rule.h"
#include "janus/engine/array.h"
#include "janus/ops/activation.h"
#include "janus/ops/ops.h"

namespace janus::autograd {
namespace {

constexpr size_t kBias = 2;  // fully_connected's and conv2d's bias input

bool is_op(const Node& n, std::string_view name) { return n.op != nullptr && n.op->name == name; }

// The position of the node's "activation" attribute when its value is relu, else -1. A
// convolution that pools its result in its call (avg_pool_2x2) has the pooling between its
// relu and its readers, which no fused step computes: -1.
int relu_attr(const Node& n) {
  const int at = n.op->attr_index("activation");
  if (at < 0) return -1;
  const int pooled = n.op->attr_index("avg_pool_2x2");
  if (pooled >= 0 && std::get<bool>(n.attrs.values()[static_cast<size_t>(pooled)])) return -1;
  const auto& value = std::get<std::string>(n.attrs.values()[static_cast<size_t>(at)]);
  return ops::parse_activation(value, n.op->name, "activation") == ops::Activation::kRelu ? at : -1;
}

// A fully_connected with relu whose bias needs a gradient: relu_backward_bias applies.
bool is_relu_dense_with_bias(const Node& n) {
  return is_op(n, "fully_connected") && n.input_meta.size() > kBias &&
         n.input_meta[kBias] != nullptr && relu_attr(n) >= 0;
}

bool is_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat64; }

NDArray or_zeros_like(NDArray dy, const NDArray& y) {
  return dy.defined() ? std::move(dy) : zeros(y.shape(), y.dtype(), y.device());
}

}  // namespace

GradSteps::GradSteps(const std::vector<Node*>& order, GradUses uses,
                     std::span<const NDArray> head_grads)
    : uses_(std::move(uses)) {
  for (const NDArray& g : head_grads) {
    if (g.defined()) read_.insert(g.storage().get());
  }
  for (Node* n : order) {
    for (const NDArray& a : n->inputs) read_.insert(a.storage().get());
    for (const NDArray& a : n->outputs) read_.insert(a.storage().get());
    if (!is_op(*n, "max_pool2d") || n->input_meta.size() != 1) continue;
    const auto& meta = n->input_meta[0];
    if (!meta || meta->is_leaf() || meta->output_index != 0) continue;
    Node* conv = meta->node.get();
    if (!is_op(*conv, "conv2d") || conv->released || relu_attr(*conv) < 0) continue;
    // The convolution's output gets no other gradient: the pooling's is all of it.
    const auto it = uses_.find(meta.get());
    if (it == uses_.end() || it->second != 1 || !is_float(n->inputs[0].dtype())) continue;
    pool_of_.emplace(n, conv);
  }
}

NDArray GradSteps::grad_buffer(const Node& node, size_t i,
                               const std::vector<NDArray>& output_grads) const {
  const auto& meta = node.input_meta[i];
  if (!meta || !meta->is_leaf() || meta->req != GradReq::kWrite) return NDArray();
  // Its only contribution: nothing is added to it (a kAdd buffer is never written here).
  const auto it = uses_.find(meta.get());
  if (it == uses_.end() || it->second != 1) return NDArray();
  // While a graph is traced, invoke writes nothing: the buffer stays backward's to fill.
  if (ops::current_trace_hook() != nullptr) return NDArray();
  const Storage* s = meta->grad.storage().get();
  if (read_.contains(s)) return NDArray();
  for (const NDArray& g : output_grads) {
    if (g.defined() && g.storage().get() == s) return NDArray();
  }
  return meta->grad;
}

std::pair<Node*, NDArray> GradSteps::pool_step(Node* node,
                                               const std::vector<NDArray>& output_grads) {
  const auto it = pool_of_.find(node);
  if (it == pool_of_.end()) return {nullptr, NDArray()};
  static const ops::OpDef& fused = ops::get_op("max_pool2d_relu_backward");
  Node* conv = it->second;
  // x: the convolution's relu output, which the pooling read.
  const NDArray x = node->inputs[0];
  const NDArray dy = or_zeros_like(output_grads[0], node->outputs[0]);
  const NDArray in[] = {x, dy};
  NDArray r[] = {NDArray(), grad_buffer(*conv, kBias, {})};
  ops::invoke_to(fused, in, node->attrs, r);
  bias_grad_[conv] = std::move(r[1]);
  return {conv, std::move(r[0])};
}

std::vector<NDArray> GradSteps::input_grads(Node* node, std::vector<NDArray> output_grads) {
  static const ops::GradFn kNoRule;
  const ops::GradFn& rule = node->differentiable() ? node->grad() : kNoRule;
  std::vector<uint8_t> needed(node->inputs.size());
  std::vector<NDArray> buffers(node->inputs.size());
  for (size_t i = 0; i < needed.size(); ++i) {
    needed[i] = node->input_meta[i] != nullptr;
    buffers[i] = grad_buffer(*node, i, output_grads);
  }
  const auto given = bias_grad_.find(node);
  if (given == bias_grad_.end() && !is_relu_dense_with_bias(*node)) {
    return apply_grad_rule(
        "backward",
        {node->name(), "", rule, node->inputs, node->outputs, node->attrs, needed, buffers},
        std::move(output_grads));
  }
  // output_grads[0] becomes the gradient before the relu, and `bias` the bias's.
  NDArray bias;
  if (given != bias_grad_.end()) {
    bias = std::move(given->second);
    bias_grad_.erase(given);
  } else {
    static const ops::OpDef& fused = ops::get_op("relu_backward_bias");
    const NDArray y = node->outputs[0];
    const NDArray dy = or_zeros_like(std::move(output_grads[0]), y);
    const NDArray in[] = {y, dy};
    NDArray r[] = {NDArray(), buffers[kBias]};
    ops::invoke_to(fused, in, {}, r);
    output_grads[0] = std::move(r[0]);
    bias = std::move(r[1]);
  }
  ops::Attrs attrs = node->attrs;
  std::get<std::string>(attrs.values()[static_cast<size_t>(relu_attr(*node))]).clear();
  const bool bias_needed = needed[kBias] != 0;
  needed[kBias] = 0;
  buffers[kBias] = NDArray();
  std::vector<NDArray> grads = apply_grad_rule(
      "backward", {node->name(), "", rule, node->inputs, node->outputs, attrs, needed, buffers},
      std::move(output_grads));
  grads[kBias] = bias_needed ? std::move(bias) : NDArray();
  return grads;
}

}  // namespace janus::autograd
