// Pass schedule: the order in which the executor runs the nodes. A graph's nodes come in the
// post-order of a walk from its first output to its last; for a backward graph, whose outputs
// are the parameters' gradients from the first layer to the last, that computes the first
// layer's gradients first and keeps every later layer's incoming gradient alive until the end.
// Walking from the last output instead runs each layer's weight gradients as soon as that
// layer's incoming gradient exists, so it dies early and its buffer is reused. For a graph with
// one output the order does not change.
#include <unordered_set>

#include "janus/graph/passes.h"

namespace janus::graph {

PassStats schedule(Graph& graph) {
  std::vector<NodeEntry> reversed(graph.outputs.rbegin(), graph.outputs.rend());
  Graph order = Graph::from_outputs(std::move(reversed));
  // Nodes no output reads are gone already (dead_code runs first); keep any that are not.
  const std::unordered_set<const Node*> reached = [&] {
    std::unordered_set<const Node*> s;
    for (const NodePtr& n : order.nodes) s.insert(n.get());
    return s;
  }();
  for (const NodePtr& n : graph.nodes) {
    if (!reached.contains(n.get())) order.nodes.insert(order.nodes.begin(), n);
  }
  PassStats stats;
  for (size_t i = 0; i < order.nodes.size(); ++i) {
    stats.changed += order.nodes[i] != graph.nodes[i] ? 1 : 0;
  }
  graph.nodes = std::move(order.nodes);
  return stats;
}

}  // namespace janus::graph
