// Pass fuse_bias_activation: a fully_connected (x · Wᵀ + bias) or conv{1,2,3}d (conv(x, W) +
// bias) whose only reader is a relu, sigmoid or tanh becomes one call with that activation,
// applied by the same kernel while the result is still in cache, with the operator's own function
// (ops/nn/post_op.h): the fused graph gives bit for bit what the imperative calls give. The
// activation node becomes the fused call in place, so its readers need no rewiring. The three
// activations' gradients read their output, not their input, so in training graphs too the
// product usually has the activation as its only reader and fuses.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "janus/graph/passes.h"
#include "janus/ops/activation.h"

#include "readers.h"

namespace janus::graph {
namespace {

// The position of the "activation" attribute of an operator that applies one as a post-op
// (fully_connected, conv2d), looked up by name; -1 when it has none.
int activation_attr(const ops::OpDef& op) { return op.attr_index("activation"); }

// The post-op activation that operator `op` computes (relu, sigmoid, tanh), if any.
std::optional<ops::Activation> post_op_of(const ops::OpDef& op) {
  const auto it = std::ranges::find_if(ops::kPostOpActivations, [&](ops::Activation a) {
    return a != ops::Activation::kNone && ops::activation_name(a) == op.name;
  });
  if (it == std::end(ops::kPostOpActivations)) return std::nullopt;
  return *it;
}

}  // namespace

PassStats fuse_bias_activation(Graph& graph) {
  std::unordered_map<const Node*, int> readers = reader_counts(graph);
  PassStats stats;
  std::unordered_map<const Node*, bool> dropped;
  for (const NodePtr& n : graph.nodes) {
    if (n->is_variable()) continue;
    const std::optional<ops::Activation> post_op = post_op_of(*n->op);
    if (!post_op) continue;
    const NodePtr producer = n->inputs[0].node;  // a copy: n->inputs is replaced below
    if (producer->is_variable()) continue;
    const int attr = activation_attr(*producer->op);
    if (attr < 0 || readers[producer.get()] != 1 ||
        producer->specs.at(0).dtype != DType::kFloat32) {
      continue;
    }
    ops::Attrs attrs = producer->attrs;
    ops::complete_attrs(*producer->op, attrs);
    std::string& activation = std::get<std::string>(attrs.values()[static_cast<size_t>(attr)]);
    if (ops::parse_activation(activation, producer->op->name, "activation") !=
        ops::Activation::kNone) {
      continue;
    }
    activation = ops::activation_name(*post_op);
    n->op = producer->op;
    n->attrs = std::move(attrs);
    n->inputs = producer->inputs;
    dropped[producer.get()] = true;
    ++stats.changed;
  }
  std::erase_if(graph.nodes, [&](const NodePtr& n) { return dropped.contains(n.get()); });
  return stats;
}

}  // namespace janus::graph
