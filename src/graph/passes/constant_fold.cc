// Pass constant_fold: a deterministic call whose inputs are all constants (or that has no inputs,
// such as ones()) is computed once, now, and becomes a constant of the graph.
#include "janus/engine/array.h"
#include "janus/graph/passes.h"

namespace janus::graph {

PassStats fold_constants(Graph& graph) {
  PassStats stats;
  std::unordered_map<const Node*, NodePtr> folded;  // operator node -> its constant outputs' node
  std::vector<NodePtr> nodes;
  // Only single-output calls fold (a constant variable has one output).
  for (const NodePtr& n : graph.nodes) {
    for (NodeEntry& e : n->inputs) {
      auto it = folded.find(e.node.get());
      if (it != folded.end()) e.node = it->second;
    }
    bool foldable = !n->is_variable() && !n->op->random && n->op->mutable_inputs.empty() &&
                    n->num_outputs() == 1 && !n->op->copy_lane;
    for (const NodeEntry& e : n->inputs) {
      foldable = foldable && e.node->is_variable() && e.node->constant.defined();
    }
    if (!foldable) {
      nodes.push_back(n);
      continue;
    }
    std::vector<NDArray> in;
    for (const NodeEntry& e : n->inputs) in.push_back(e.node->constant);
    ops::ScopedTraceHook not_traced(nullptr);
    auto c = std::make_shared<Node>();
    c->name = n->name;
    c->constant = ops::invoke(*n->op, in, n->attrs).at(0);
    c->specs = {ops::TensorSpec{c->constant.shape(), c->constant.dtype(), c->constant.device()}};
    folded[n.get()] = c;
    nodes.push_back(c);
    ++stats.changed;
  }
  for (NodeEntry& e : graph.outputs) {
    auto it = folded.find(e.node.get());
    if (it != folded.end()) e.node = it->second;
  }
  graph.nodes = std::move(nodes);
  // Constants that nothing reads any more (their users folded too) are dropped by dead_code.
  eliminate_dead_code(graph);
  return stats;
}

}  // namespace janus::graph
