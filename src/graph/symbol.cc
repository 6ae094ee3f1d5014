// Graph traversal and the Symbol API (construction, arguments, inference, evaluation).
#include "janus/graph/symbol.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "janus/base/error.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/passes.h"

namespace janus::graph {

std::string unique_name(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}{}", prefix, counter.fetch_add(1, std::memory_order_relaxed));
}

Graph Graph::from_outputs(std::vector<NodeEntry> outputs) {
  Graph g;
  std::unordered_set<const Node*> seen;
  // Iterative post-order DFS, inputs visited in order: deterministic.
  std::vector<std::pair<Node*, size_t>> stack;
  std::unordered_map<const Node*, NodePtr> owner;
  for (const NodeEntry& out : outputs) {
    JANUS_ASSERT(out.node != nullptr, "graph output without a node");
    if (!seen.insert(out.node.get()).second) continue;
    owner[out.node.get()] = out.node;
    stack.emplace_back(out.node.get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        const NodePtr& child = node->inputs[next++].node;
        if (seen.insert(child.get()).second) {
          owner[child.get()] = child;
          stack.emplace_back(child.get(), 0);
        }
        continue;
      }
      g.nodes.push_back(owner[node]);
      stack.pop_back();
    }
  }
  g.outputs = std::move(outputs);
  return g;
}

std::vector<NodePtr> Graph::arguments() const {
  std::vector<NodePtr> out;
  for (const NodePtr& n : nodes) {
    if (n->is_variable() && !n->constant.defined()) out.push_back(n);
  }
  return out;
}

Graph Graph::clone() const {
  std::unordered_map<const Node*, NodePtr> copies;
  Graph g;
  for (const NodePtr& n : nodes) {
    auto c = std::make_shared<Node>(*n);
    for (NodeEntry& e : c->inputs) {
      auto it = copies.find(e.node.get());
      JANUS_ASSERT(it != copies.end(), "graph nodes are not in topological order at '{}'", n->name);
      e.node = it->second;
    }
    copies[n.get()] = c;
    g.nodes.push_back(std::move(c));
  }
  for (const NodeEntry& e : outputs) g.outputs.push_back({copies.at(e.node.get()), e.index});
  return g;
}

ops::Attrs attrs_from_named(const ops::OpDef& op, const NamedAttrs& named) {
  std::vector<std::optional<ops::AttrValue>> slots(op.attrs.size());
  for (const auto& [key, value] : named) {
    const int i = op.attr_index(key);
    if (i < 0) {
      std::vector<std::string_view> known;
      for (const auto& a : op.attrs) known.push_back(a.name);
      JANUS_THROW(ValueError, "{}: no attribute named '{}', expected one of [{}]", op.name, key,
                  fmt::join(known, ", "));
    }
    slots[static_cast<size_t>(i)] = value;
  }
  ops::Attrs attrs;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i]) {
      attrs.values().push_back(*slots[i]);
      continue;
    }
    JANUS_CHECK(op.attrs[i].default_value.has_value(), ValueError,
                "{}: attribute '{}' is required and was not given", op.name, op.attrs[i].name);
    attrs.values().push_back(*op.attrs[i].default_value);
  }
  ops::complete_attrs(op, attrs);
  return attrs;
}

Symbol Symbol::var(std::string name, std::optional<Shape> shape, DType dtype) {
  JANUS_CHECK(!name.empty(), ValueError, "Symbol::var: the name is empty");
  auto node = std::make_shared<Node>();
  node->name = std::move(name);
  if (shape) node->specs.push_back(ops::TensorSpec{*shape, dtype, cpu()});
  return Symbol({NodeEntry{std::move(node), 0}});
}

Symbol Symbol::op(std::string_view op_name, const std::vector<Symbol>& inputs,
                  const NamedAttrs& attrs, std::string name) {
  const ops::OpDef& def = ops::get_op(op_name);
  JANUS_CHECK(def.accepts_inputs(inputs.size()), ValueError,
              "Symbol::op: operator '{}' takes {} inputs ({}), got {}", def.name, def.inputs.size(),
              fmt::join(def.inputs, ", "), inputs.size());
  auto node = std::make_shared<Node>();
  node->op = &def;
  node->name = name.empty() ? unique_name(def.name) : std::move(name);
  node->attrs = attrs_from_named(def, attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    JANUS_CHECK(inputs[i].num_outputs() == 1, ValueError,
                "Symbol::op: input '{}' of '{}' has {} outputs, expected one (pick one with [i])",
                def.input_name(i), node->name, inputs[i].num_outputs());
    node->inputs.push_back(inputs[i].outputs_[0]);
  }
  std::vector<NodeEntry> outs;
  for (uint32_t i = 0; i < def.outputs.size(); ++i) outs.push_back({node, i});
  return Symbol(std::move(outs));
}

Symbol Symbol::group(const std::vector<Symbol>& symbols) {
  std::vector<NodeEntry> outs;
  for (const Symbol& s : symbols) outs.insert(outs.end(), s.outputs_.begin(), s.outputs_.end());
  return Symbol(std::move(outs));
}

Symbol Symbol::operator[](size_t i) const {
  JANUS_CHECK(i < outputs_.size(), IndexError, "Symbol: output {} requested, it has {} outputs", i,
              outputs_.size());
  return Symbol({outputs_[i]});
}

std::vector<std::string> Symbol::list_arguments() const {
  std::vector<std::string> names;
  for (const NodePtr& n : graph().arguments()) names.push_back(n->name);
  return names;
}

std::vector<std::string> Symbol::list_outputs() const {
  std::vector<std::string> names;
  for (const NodeEntry& e : outputs_) {
    names.push_back(e.node->is_variable()
                        ? e.node->name
                        : fmt::format("{}_{}", e.node->name, e.node->op->outputs[e.index]));
  }
  return names;
}

Symbol::Inferred Symbol::infer(const std::map<std::string, ops::TensorSpec>& known) const {
  Graph g = graph().clone();
  for (const NodePtr& n : g.arguments()) {
    auto it = known.find(n->name);
    if (it != known.end()) n->specs = {it->second};
  }
  infer_specs(g);
  Inferred out;
  for (const NodePtr& n : g.arguments()) out.arguments.push_back(n->specs.at(0));
  for (const NodeEntry& e : g.outputs) out.outputs.push_back(e.node->specs.at(e.index));
  return out;
}

std::pair<std::vector<Shape>, std::vector<Shape>> Symbol::infer_shape(
    const std::map<std::string, Shape>& shapes) const {
  std::map<std::string, ops::TensorSpec> known;
  for (const auto& [name, shape] : shapes)
    known[name] = ops::TensorSpec{shape, DType::kFloat32, cpu()};
  Inferred inferred = infer(known);
  std::pair<std::vector<Shape>, std::vector<Shape>> out;
  for (const auto& s : inferred.arguments) out.first.push_back(s.shape);
  for (const auto& s : inferred.outputs) out.second.push_back(s.shape);
  return out;
}

std::vector<NDArray> Symbol::eval(const std::map<std::string, NDArray>& args) const {
  const std::vector<std::string> names = list_arguments();
  std::vector<NDArray> bound;
  for (const std::string& name : names) {
    auto it = args.find(name);
    JANUS_CHECK(it != args.end(), ValueError, "Symbol::eval: argument '{}' was not given", name);
    bound.push_back(it->second);
  }
  for (const auto& [name, value] : args) {
    JANUS_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ValueError,
                "Symbol::eval: '{}' is not an argument of the symbol, expected one of [{}]", name,
                fmt::join(names, ", "));
  }
  std::vector<ops::TensorSpec> specs;
  for (const NDArray& a : bound) specs.push_back(ops::TensorSpec{a.shape(), a.dtype(), a.device()});
  CachedOp op(*this, std::move(specs));
  return op(bound);
}

namespace {
Symbol binary(std::string_view op, const Symbol& a, const Symbol& b) {
  return Symbol::op(op, {a, b});
}
}  // namespace

Symbol operator+(const Symbol& a, const Symbol& b) { return binary("add", a, b); }
Symbol operator-(const Symbol& a, const Symbol& b) { return binary("subtract", a, b); }
Symbol operator*(const Symbol& a, const Symbol& b) { return binary("mul", a, b); }
Symbol operator/(const Symbol& a, const Symbol& b) { return binary("divide", a, b); }

}  // namespace janus::graph
