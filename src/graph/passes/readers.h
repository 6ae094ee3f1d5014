// How often each node's value is read, for the fusion passes, which may fold a node into its
// only reader. Private to the passes.
#pragma once

#include <unordered_map>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// Per node: one for each input that reads it, and two more when it is a graph output, so that
/// a count of 1 means exactly one reader inside the graph and nothing outside it.
inline std::unordered_map<const Node*, int> reader_counts(const Graph& graph) {
  std::unordered_map<const Node*, int> readers;
  for (const NodePtr& n : graph.nodes) {
    for (const NodeEntry& e : n->inputs) ++readers[e.node.get()];
  }
  for (const NodeEntry& e : graph.outputs) readers[e.node.get()] += 2;
  return readers;
}

}  // namespace janus::graph
