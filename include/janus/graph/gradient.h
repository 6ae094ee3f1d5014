// The backward graph of a graph: each operator's gradient rule, called on placeholders while
// tracing, so that backward is a compiled graph too (hybridized training). Layer: graph.
#pragma once

#include <string>
#include <vector>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// Where an argument of the backward graph comes from.
struct BackwardArg {
  enum class Kind : uint8_t {
    kInput,     // argument `index` of the differentiated graph (list_arguments order)
    kSaved,     // forward's output num_outputs + `index`: a value that forward saved
    kHeadGrad,  // the gradient of the graph's output `index`
  };
  Kind kind;
  size_t index;

  bool operator==(const BackwardArg&) const = default;
};

/// A forward graph split for training: `forward` computes the outputs and then the values that
/// backward needs ("saved"); `backward` computes the gradients of the chosen arguments from
/// the arguments, the saved values and the outputs' gradients. The roles of both graphs'
/// arguments are given here, typed; their variable names are for reading dumps only.
struct GradientGraphs {
  Symbol forward;
  size_t num_outputs = 0;  // forward's first outputs are the graph's; the rest are saved values
  /// Per argument of forward (list_arguments order): its position among the graph's arguments.
  std::vector<size_t> forward_args;
  Symbol backward;  // one output per entry of `wrt`, in that order
  /// Per argument of backward (list_arguments order): where its value comes from.
  std::vector<BackwardArg> backward_args;
  std::vector<std::string> wrt;
};

/// Differentiates `graph` (arguments of `arg_specs`, list_arguments order) with respect to the
/// arguments named in `wrt`. NotImplementedError naming the operator when a gradient would have
/// to pass through one that is not differentiable.
GradientGraphs make_gradient_graphs(const Symbol& graph,
                                    const std::vector<ops::TensorSpec>& arg_specs,
                                    const std::vector<std::string>& wrt);

}  // namespace janus::graph
