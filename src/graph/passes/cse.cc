// Pass cse: common-subexpression elimination. Two calls of the same deterministic operator with
// equal attributes on the same input entries compute the same values: the later one is dropped
// and its users read the earlier one.
#include <fmt/format.h>

#include <unordered_map>

#include "janus/graph/passes.h"

namespace janus::graph {
namespace {

std::string key_of(const Node& n, const std::unordered_map<const Node*, const Node*>& merged) {
  std::string key = fmt::format("{}|", n.op->name);
  for (const auto& v : n.attrs.values()) {
    key += ops::attr_value_to_string(v);
    key += v.index() == 5 ? "s" : "";  // a Shape and a list of ints print alike
    key += ';';
  }
  for (const NodeEntry& e : n.inputs) {
    auto it = merged.find(e.node.get());
    key += fmt::format("|{}:{}", fmt::ptr(it == merged.end() ? e.node.get() : it->second), e.index);
  }
  return key;
}

}  // namespace

PassStats eliminate_common_subexpressions(Graph& graph) {
  PassStats stats;
  std::unordered_map<std::string, NodePtr> seen;
  std::unordered_map<const Node*, const Node*> merged;  // dropped node -> the one kept
  std::unordered_map<const Node*, NodePtr> keep_of;
  std::vector<NodePtr> nodes;
  for (const NodePtr& n : graph.nodes) {
    for (NodeEntry& e : n->inputs) {
      auto it = keep_of.find(e.node.get());
      if (it != keep_of.end()) e.node = it->second;
    }
    if (n->is_variable() || n->op->random || !n->op->mutable_inputs.empty()) {
      nodes.push_back(n);
      continue;
    }
    auto [it, inserted] = seen.try_emplace(key_of(*n, merged), n);
    if (inserted) {
      nodes.push_back(n);
      continue;
    }
    merged[n.get()] = it->second.get();
    keep_of[n.get()] = it->second;
    ++stats.changed;
  }
  for (NodeEntry& e : graph.outputs) {
    auto it = keep_of.find(e.node.get());
    if (it != keep_of.end()) e.node = it->second;
  }
  graph.nodes = std::move(nodes);
  return stats;
}

}  // namespace janus::graph
