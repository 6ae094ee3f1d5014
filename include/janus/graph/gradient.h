// The backward graph of a graph: each operator's gradient rule, called on placeholders while
// tracing, so that backward is a compiled graph too (hybridized training). Layer: graph.
#pragma once

#include <string>
#include <vector>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// A forward graph split for training: `forward` computes the outputs and then the values that
/// backward needs ("saved"); `backward` computes the gradients of the chosen arguments from
/// the arguments, the saved values ("_saved<k>") and the outputs' gradients ("_head_grad<i>").
struct GradientGraphs {
  Symbol forward;
  size_t num_outputs = 0;  // forward's first outputs are the graph's; the rest are saved values
  Symbol backward;         // one output per entry of `wrt`, in that order
  std::vector<std::string> wrt;
};

/// Differentiates `graph` (arguments of `arg_specs`, list_arguments order) with respect to the
/// arguments named in `wrt`. NotImplementedError naming the operator when a gradient would have
/// to pass through one that is not differentiable.
GradientGraphs make_gradient_graphs(const Symbol& graph,
                                    const std::vector<ops::TensorSpec>& arg_specs,
                                    const std::vector<std::string>& wrt);

}  // namespace janus::graph
