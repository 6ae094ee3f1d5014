// Pass fuse_bias_activation: a fully_connected (x · Wᵀ + bias) whose only reader is a relu
// becomes one fully_connected with activation "relu", which oneDNN applies as a post-op while
// the product is still in registers. The relu node becomes the fused call in place, so its
// readers need no rewiring. (Convolutions keep a separate relu for now.)
#include <unordered_map>

#include "janus/graph/passes.h"

namespace janus::graph {

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
    const NodePtr fc = n->inputs[0].node;  // a copy: n->inputs is replaced below
    if (fc->is_variable() || fc->op->name != "fully_connected" || readers[fc.get()] != 1 ||
        fc->attrs.get<std::string>(0) != "" || fc->specs.at(0).dtype != DType::kFloat32) {
      continue;
    }
    n->op = fc->op;
    n->attrs = ops::Attrs{std::string("relu")};
    n->inputs = fc->inputs;
    dropped[fc.get()] = true;
    ++stats.changed;
  }
  std::erase_if(graph.nodes, [&](const NodePtr& n) { return dropped.contains(n.get()); });
  return stats;
}

}  // namespace janus::graph
