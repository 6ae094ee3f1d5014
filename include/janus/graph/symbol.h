// The symbolic IR: nodes (operator calls and variables) joined by entries (a node's output),
// a Graph (nodes in topological order plus its outputs) and the Symbol API over it. Layer:
// graph (uses ops, engine, core).
//
//   auto x = Symbol::var("x");
//   auto w = Symbol::var("w");
//   auto y = Symbol::op("relu", {Symbol::op("dot", {x, w})});
//   y.list_arguments();                            // {"x", "w"}
//   auto out = y.eval({{"x", a}, {"w", b}});       // compiles and runs once
//   std::string text = y.tojson();                 // Symbol::fromjson(text) gives it back
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/ops/registry.h"

namespace janus::graph {

struct Node;

/// Output `index` of `node`.
struct NodeEntry {
  std::shared_ptr<Node> node;
  uint32_t index = 0;

  bool operator==(const NodeEntry& o) const { return node == o.node && index == o.index; }
};

struct Node {
  /// The operator; nullptr for a variable (an argument bound at run time, or a constant).
  const ops::OpDef* op = nullptr;
  std::string name;
  /// Complete attributes (defaults filled), by position in the OpDef.
  ops::Attrs attrs;
  std::vector<NodeEntry> inputs;
  /// Variables only: a value captured while tracing (an array that the forward used but that is
  /// neither an input nor a parameter). The graph owns it; it is bound automatically.
  NDArray constant;
  /// Shapes and dtypes of the outputs, filled by shape inference (empty before).
  std::vector<ops::TensorSpec> specs;

  bool is_variable() const { return op == nullptr; }
  size_t num_outputs() const { return op == nullptr ? 1 : op->outputs.size(); }
};

using NodePtr = std::shared_ptr<Node>;

/// Attributes given by name, as users and files write them.
using NamedAttrs = std::vector<std::pair<std::string, ops::AttrValue>>;

/// Every node that the outputs depend on, each after its inputs (a deterministic depth-first
/// post-order), and the outputs.
struct Graph {
  std::vector<NodePtr> nodes;
  std::vector<NodeEntry> outputs;

  /// Argument variables (not constants) in topological order.
  std::vector<NodePtr> arguments() const;
  /// The graph reachable from `outputs`, in topological order.
  static Graph from_outputs(std::vector<NodeEntry> outputs);
  /// A copy with fresh nodes (passes rewrite their own copy, never a user's symbol).
  Graph clone() const;
};

/// A handle to one or more outputs of a graph (the Symbol of MXNet and the seed documents).
class Symbol {
 public:
  Symbol() = default;
  explicit Symbol(std::vector<NodeEntry> outputs) : outputs_(std::move(outputs)) {}

  /// A variable called `name`, optionally with a known shape and dtype.
  static Symbol var(std::string name, std::optional<Shape> shape = std::nullopt,
                    DType dtype = DType::kFloat32);
  /// A call of the registered operator `op_name` on the inputs (one output each). `name`
  /// defaults to "<op><counter>". Attribute names and types are checked here.
  static Symbol op(std::string_view op_name, const std::vector<Symbol>& inputs,
                   const NamedAttrs& attrs = {}, std::string name = "");
  /// The outputs of several symbols as one.
  static Symbol group(const std::vector<Symbol>& symbols);

  /// Output `i` alone; IndexError when out of range.
  Symbol operator[](size_t i) const;
  size_t num_outputs() const { return outputs_.size(); }
  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  Graph graph() const { return Graph::from_outputs(outputs_); }

  /// Names of the argument variables, in topological order.
  std::vector<std::string> list_arguments() const;
  /// "<node>_<output name>" for each output.
  std::vector<std::string> list_outputs() const;

  /// Shapes and dtypes of every argument and output, from those given for some arguments
  /// (others must have been declared with a shape). ShapeError naming the variable when one is
  /// missing, or the operator's own error when shapes do not fit.
  struct Inferred {
    std::vector<ops::TensorSpec> arguments;
    std::vector<ops::TensorSpec> outputs;
  };
  Inferred infer(const std::map<std::string, ops::TensorSpec>& known) const;
  /// infer() for float32 arrays on cpu, shapes only: (argument shapes, output shapes).
  std::pair<std::vector<Shape>, std::vector<Shape>> infer_shape(
      const std::map<std::string, Shape>& shapes) const;

  /// Runs the graph once on `args` (by argument name) and returns the outputs.
  std::vector<NDArray> eval(const std::map<std::string, NDArray>& args) const;

  /// The graph as JSON (docs/graph-format.md); fromjson reads it back, FormatError naming
  /// `source` and the problem for anything malformed.
  std::string tojson() const;
  static Symbol fromjson(std::string_view json, std::string_view source = "<string>");
  /// tojson into a file / fromjson from one; IOError naming the path when it cannot be
  /// written or read.
  void save(const std::string& path) const;
  static Symbol load(const std::string& path);

  /// One line per node: name, operator, inputs, attributes and (when inferred) shapes.
  std::string summary() const;
  /// The graph in Graphviz DOT.
  std::string to_dot() const;

 private:
  std::vector<NodeEntry> outputs_;
};

Symbol operator+(const Symbol& a, const Symbol& b);
Symbol operator-(const Symbol& a, const Symbol& b);
Symbol operator*(const Symbol& a, const Symbol& b);
Symbol operator/(const Symbol& a, const Symbol& b);

/// The positional Attrs of `op` from named ones (defaults filled); ValueError naming the
/// operator and the attribute for an unknown name or a wrong type.
ops::Attrs attrs_from_named(const ops::OpDef& op, const NamedAttrs& named);

/// A fresh node name "<prefix><n>", unique in the process.
std::string unique_name(std::string_view prefix);

}  // namespace janus::graph
