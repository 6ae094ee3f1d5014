// Symbol::summary and Symbol::to_dot: a graph for people.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unordered_map>

#include "janus/graph/symbol.h"

namespace janus::graph {
namespace {

std::string entry_name(const NodeEntry& e) {
  if (e.node->is_variable() || e.node->num_outputs() == 1) return e.node->name;
  return fmt::format("{}[{}]", e.node->name, e.index);
}

std::string specs_text(const Node& n) {
  std::vector<std::string> parts;
  for (const auto& s : n.specs) parts.push_back(fmt::format("{} {}", s.shape, dtype_name(s.dtype)));
  return parts.empty() ? "" : fmt::format(" -> {}", fmt::join(parts, ", "));
}

std::string attrs_text(const Node& n) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < n.op->attrs.size() && i < n.attrs.size(); ++i) {
    parts.push_back(
        fmt::format("{}={}", n.op->attrs[i].name, ops::attr_value_to_string(n.attrs.values()[i])));
  }
  return parts.empty() ? "" : fmt::format(" {{{}}}", fmt::join(parts, ", "));
}

}  // namespace

std::string Symbol::summary() const {
  const Graph g = graph();
  std::string out;
  int ops = 0;
  for (const NodePtr& n : g.nodes) {
    if (n->is_variable()) {
      out += fmt::format("  {:<24} {}{}\n", n->name,
                         n->constant.defined() ? "constant" : "variable", specs_text(*n));
      continue;
    }
    ++ops;
    std::vector<std::string> ins;
    for (const NodeEntry& e : n->inputs) ins.push_back(entry_name(e));
    out += fmt::format("  {:<24} {}({}){}{}\n", n->name, n->op->name, fmt::join(ins, ", "),
                       attrs_text(*n), specs_text(*n));
  }
  std::vector<std::string> outs;
  for (const NodeEntry& e : g.outputs) outs.push_back(entry_name(e));
  return fmt::format("Graph: {} nodes ({} operators), outputs: {}\n{}", g.nodes.size(), ops,
                     fmt::join(outs, ", "), out);
}

std::string Symbol::to_dot() const {
  const Graph g = graph();
  std::unordered_map<const Node*, size_t> id;
  std::string out = "digraph janus {\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  for (const NodePtr& n : g.nodes) {
    const size_t i = id.size();
    id[n.get()] = i;
    if (n->is_variable()) {
      out += fmt::format("  n{} [label=\"{}\", shape=ellipse];\n", i, n->name);
    } else {
      out += fmt::format("  n{} [label=\"{}\\n{}\", shape=box];\n", i, n->name, n->op->name);
    }
    for (const NodeEntry& e : n->inputs) {
      out += fmt::format("  n{} -> n{};\n", id.at(e.node.get()), i);
    }
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    out += fmt::format("  out{} [label=\"output {}\", shape=plaintext];\n  n{} -> out{};\n", k, k,
                       id.at(g.outputs[k].node.get()), k);
  }
  return out + "}\n";
}

}  // namespace janus::graph
