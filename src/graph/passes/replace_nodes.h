// The last step of a fusion pass, shared by the passes: readers of replaced nodes read the
// fused call instead, and the nodes the fusion absorbed leave the graph. Private to the passes.
#pragma once

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// Every input and graph output that reads a node of `replaced` (nodes of one output) reads
/// its entry there instead; then the nodes of `replaced` and of `dropped` leave graph.nodes.
inline void replace_nodes(Graph& graph, const std::unordered_map<const Node*, NodeEntry>& replaced,
                          const std::unordered_set<const Node*>& dropped = {}) {
  auto rewire = [&](NodeEntry& e) {
    const auto it = replaced.find(e.node.get());
    if (it != replaced.end()) e = it->second;
  };
  for (const NodePtr& n : graph.nodes) {
    for (NodeEntry& e : n->inputs) rewire(e);
  }
  for (NodeEntry& e : graph.outputs) rewire(e);
  std::erase_if(graph.nodes, [&](const NodePtr& n) {
    return replaced.contains(n.get()) || dropped.contains(n.get());
  });
}

}  // namespace janus::graph
