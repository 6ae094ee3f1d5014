// Graph passes: each rewrites a Graph in place and lives in its own file under
// src/graph/passes/; `pass_pipeline()` lists them once, in order. Layer: graph.
//
// JANUS_DUMP_IR=<pass> (or "all") prints the graph after that pass to stderr.
#pragma once

#include <string_view>
#include <vector>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// What a pass reports: how many nodes it removed, merged or rewrote.
struct PassStats {
  int changed = 0;
};

using PassFn = PassStats (*)(Graph& graph);

struct PassInfo {
  std::string_view name;
  std::string_view doc;
  PassFn run;
};

/// Fills every node's `specs` from the argument variables' specs (a variable without one is a
/// ShapeError naming it); operators' own shape rules raise their errors.
PassStats infer_specs(Graph& graph);
/// Drops the nodes that no output depends on.
PassStats eliminate_dead_code(Graph& graph);
/// Merges calls of the same deterministic operator with the same attributes on the same inputs.
PassStats eliminate_common_subexpressions(Graph& graph);
/// Computes, once, every deterministic call whose inputs are all constants; the result becomes a
/// constant.
PassStats fold_constants(Graph& graph);
/// fully_connected or conv{1,2,3}d followed by relu, sigmoid or tanh (its only reader) becomes
/// one call with that activation as a post-op.
PassStats fuse_bias_activation(Graph& graph);
/// avg_pool2d of 2x2 windows with stride 2 and no padding reading a conv2d that nothing else
/// reads becomes one conv2d call with avg_pool_2x2 (the pooling inside the call).
PassStats fuse_conv_avg_pool(Graph& graph);
/// relu_backward followed by a sum over axis 0 of its 2-D result (a fully_connected layer's
/// relu and bias gradients) becomes one relu_backward_bias call.
PassStats fuse_relu_backward_bias(Graph& graph);
/// relu_backward(x, max_pool2d_backward(x, dy)) (relu then max pooling), with the
/// conv2d_backward_bias that reads it if any, becomes one max_pool2d_relu_backward call.
PassStats fuse_max_pool_relu_backward(Graph& graph);
/// Trees of elementwise operators on same-shaped float arrays become one fused_elementwise
/// node that runs them tile by tile (inputs read once, output written once).
PassStats fuse_elementwise(Graph& graph);
/// Orders the nodes by a walk from the last output to the first: in a backward graph, each
/// layer's weight gradients run as soon as its incoming gradient exists, which then dies early.
PassStats schedule(Graph& graph);

/// The pipeline, in order: infer_shape, dead_code, cse, constant_fold, fuse_bias_activation,
/// fuse_conv_avg_pool, fuse_relu_backward_bias, fuse_max_pool_relu_backward, fuse_elementwise,
/// schedule. Memory planning runs in the executor (CachedOp), which owns the buffers.
const std::vector<PassInfo>& pass_pipeline();

/// Runs the pipeline on `graph`, honouring JANUS_DUMP_IR.
void run_passes(Graph& graph);

}  // namespace janus::graph
