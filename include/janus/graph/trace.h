// Tracing: runs a forward once on symbolic placeholders and records every operator call as a
// graph node. Layer: graph.
//
//   graph::Tracer tracer;
//   NDArray x = tracer.input("data", {{1, 512}, DType::kFloat32, cpu()});
//   NDArray y;
//   {
//     graph::TraceScope scope(tracer);      // operators now record nodes; no kernel runs
//     y = relu(dot(x, w));                  // w (a real array) becomes a variable or constant
//   }
//   Symbol s = tracer.finish({y});
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "janus/graph/symbol.h"

namespace janus::graph {

class Tracer : public ops::TraceHook {
 public:
  /// Names a real array that the traced code reads (a parameter): it becomes an argument
  /// variable rather than a captured constant. Returns nullopt for arrays it does not know.
  using ParamResolver = std::function<std::optional<std::string>(const NDArray&)>;

  explicit Tracer(ParamResolver resolver = nullptr);

  /// A placeholder for the graph input `name`.
  NDArray input(std::string name, const ops::TensorSpec& spec);
  /// The variable node of a placeholder that input() made: how a caller finds its inputs among
  /// the finished graph's arguments without going by their names.
  const NodePtr& input_node(const NDArray& placeholder) const;

  /// The graph that computes `outputs` from the inputs, parameters and captured constants.
  Symbol finish(std::span<const NDArray> outputs);

  /// Operator calls recorded so far.
  size_t recorded() const { return recorded_; }

  std::vector<NDArray> on_trace(const ops::OpDef& op, std::span<const NDArray> inputs,
                                const ops::Attrs& attrs,
                                std::span<const ops::TensorSpec> outputs) override;

 private:
  NodeEntry entry_of(const NDArray& a, std::string_view user);

  ParamResolver resolver_;
  std::unordered_map<const Storage*, NodeEntry> placeholders_;
  std::unordered_map<const Storage*, NodePtr> real_;  // parameters and constants by storage
  size_t recorded_ = 0;
  int constants_ = 0;
};

/// Sends this thread's operator calls to `tracer` while alive.
class TraceScope {
 public:
  explicit TraceScope(Tracer& tracer) : hook_(&tracer) {}

 private:
  ops::ScopedTraceHook hook_;
};

/// True while this thread is tracing.
inline bool is_tracing() { return ops::current_trace_hook() != nullptr; }

}  // namespace janus::graph
