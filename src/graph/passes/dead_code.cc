// Pass dead_code: drops the nodes that no output depends on (a traced forward may compute
// values that it never returns).
#include <algorithm>
#include <utility>
#include <vector>

#include "janus/graph/passes.h"

namespace janus::graph {

PassStats eliminate_dead_code(Graph& graph) {
  const size_t before = graph.nodes.size();
  // Arguments stay even when unused: callers bind them by position.
  std::vector<NodePtr> args = graph.arguments();
  Graph live = Graph::from_outputs(graph.outputs);
  std::vector<NodePtr> nodes;
  for (const NodePtr& a : args) {
    if (std::find(live.nodes.begin(), live.nodes.end(), a) == live.nodes.end()) nodes.push_back(a);
  }
  nodes.insert(nodes.end(), live.nodes.begin(), live.nodes.end());
  graph.nodes = std::move(nodes);
  return PassStats{static_cast<int>(before - graph.nodes.size())};
}

}  // namespace janus::graph
