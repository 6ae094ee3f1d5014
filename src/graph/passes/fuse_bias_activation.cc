// Pass fuse_bias_activation: a fully_connected (x · Wᵀ + bias) or conv2d (conv(x, W) + bias)
// whose only reader is a relu becomes one call with activation "relu", applied by the same
// kernel while the result is still in cache, with relu's rule (NaN stays NaN): the fused graph
// gives exactly what the imperative calls give. The relu node becomes the fused call in place,
// so its readers need no rewiring. relu's gradient reads relu's output, so in training graphs
// too the product usually has the relu as its only reader and fuses.
#include <unordered_map>

#include "janus/graph/passes.h"
#include "janus/ops/activation.h"

namespace janus::graph {
namespace {

// The position of the "activation" attribute of an operator that applies one as a post-op
// (fully_connected, conv2d), looked up by name; -1 when it has none.
int activation_attr(const ops::OpDef& op) { return op.attr_index("activation"); }

}  // namespace

PassStats fuse_bias_activation(Graph& graph) {
  std::unordered_map<const Node*, int> readers;
  for (const NodePtr& n : graph.nodes) {
    for (const NodeEntry& e : n->inputs) ++readers[e.node.get()];
  }
  for (const NodeEntry& e : graph.outputs) readers[e.node.get()] += 2;
  PassStats stats;
  std::unordered_map<const Node*, bool> dropped;
  for (const NodePtr& n : graph.nodes) {
    if (n->is_variable() || n->op->name != "relu") continue;
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
    activation = ops::activation_name(ops::Activation::kRelu);
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
