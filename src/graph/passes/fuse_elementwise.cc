// Pass fuse_elementwise: trees of elementwise operators on same-shaped float arrays become one
// fused_elementwise node, which runs them tile by tile so that intermediate values never go
// to memory. A node joins its consumer's group when that consumer is its only reader (so
// groups are trees and no cycle can form); the group's last node becomes the fused node, in
// place, so its readers need no rewiring.
#include <unordered_map>

#include "janus/graph/passes.h"
#include "janus/ops/fused.h"

#include "readers.h"

namespace janus::graph {
namespace {

bool eligible(const Node& n) {
  if (n.is_variable() || !ops::fusable(*n.op) || n.specs.size() != 1) return false;
  const ops::TensorSpec& out = n.specs[0];
  if (out.dtype != DType::kFloat32 && out.dtype != DType::kFloat64) return false;
  for (const NodeEntry& e : n.inputs) {
    const ops::TensorSpec& in = e.node->specs.at(e.index);
    if (in.shape != out.shape || in.dtype != out.dtype) return false;
  }
  return true;
}

}  // namespace

PassStats fuse_elementwise(Graph& graph) {
  // Uses of a node's (single) output; a graph output is never inside a group.
  std::unordered_map<const Node*, int> readers = reader_counts(graph);
  // Members of the group rooted at each node, in topological order.
  std::unordered_map<const Node*, std::vector<NodePtr>> group;
  std::unordered_map<const Node*, const Node*> root_of;
  for (const NodePtr& n : graph.nodes) {
    if (!eligible(*n)) continue;
    std::vector<NodePtr> members;
    for (const NodeEntry& e : n->inputs) {
      const Node* p = e.node.get();
      auto it = group.find(p);
      if (it == group.end() || readers[p] != 1) continue;
      members.insert(members.end(), it->second.begin(), it->second.end());
      for (const NodePtr& m : it->second) root_of[m.get()] = n.get();
      group.erase(it);
    }
    members.push_back(n);
    root_of[n.get()] = n.get();
    group[n.get()] = std::move(members);
  }
  PassStats stats;
  std::unordered_map<const Node*, bool> dropped;
  const ops::OpDef& fused = ops::get_op("fused_elementwise");
  for (const NodePtr& root : graph.nodes) {
    auto it = group.find(root.get());
    if (it == group.end() || it->second.size() < 2) continue;
    std::vector<NodePtr>& members = it->second;
    std::sort(members.begin(), members.end(), [&](const NodePtr& a, const NodePtr& b) {
      return std::find(graph.nodes.begin(), graph.nodes.end(), a) <
             std::find(graph.nodes.begin(), graph.nodes.end(), b);
    });
    std::unordered_map<const Node*, int> step_of;
    std::vector<NodeEntry> inputs;
    std::vector<ops::FusedStep> steps;
    std::vector<std::string> names;
    for (const NodePtr& m : members) {
      ops::FusedStep step{m->op, m->attrs, {}};
      for (const NodeEntry& e : m->inputs) {
        auto s = step_of.find(e.node.get());
        if (s != step_of.end()) {
          step.inputs.push_back(-1 - s->second);
          continue;
        }
        auto known = std::find(inputs.begin(), inputs.end(), e);
        step.inputs.push_back(static_cast<int>(known - inputs.begin()));
        if (known == inputs.end()) inputs.push_back(e);
      }
      step_of[m.get()] = static_cast<int>(steps.size());
      steps.push_back(std::move(step));
      names.push_back(m->name);
      if (m != root) dropped[m.get()] = true;
    }
    ops::Attrs attrs{ops::encode_fused_program(steps)};
    root->op = &fused;
    root->attrs = std::move(attrs);
    root->inputs = std::move(inputs);
    stats.changed += static_cast<int>(members.size());
  }
  std::erase_if(graph.nodes, [&](const NodePtr& n) { return dropped.contains(n.get()); });
  return stats;
}

}  // namespace janus::graph
