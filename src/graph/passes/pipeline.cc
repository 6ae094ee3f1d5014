// The pass pipeline, listed once, and JANUS_DUMP_IR.
#include <cstdlib>
#include <iostream>

#include "janus/graph/passes.h"

namespace janus::graph {

const std::vector<PassInfo>& pass_pipeline() {
  static const std::vector<PassInfo> passes = {
      {"infer_shape", "shapes and dtypes of every value", infer_specs},
      {"dead_code", "drop nodes that no output depends on", eliminate_dead_code},
      {"cse", "merge identical deterministic calls", eliminate_common_subexpressions},
      {"constant_fold", "compute calls on constants once", fold_constants},
      {"fuse_bias_activation", "relu, sigmoid or tanh inside the call of fully_connected or conv",
       fuse_bias_activation},
      {"fuse_conv_avg_pool", "a 2x2 stride-2 average pooling inside the call of conv2d",
       fuse_conv_avg_pool},
      {"fuse_relu_backward_bias", "relu_backward and the bias gradient's sum in one call",
       fuse_relu_backward_bias},
      {"fuse_max_pool_relu_backward", "max pooling's, relu's and the bias gradients in one call",
       fuse_max_pool_relu_backward},
      {"fuse_elementwise", "one kernel for each tree of elementwise calls", fuse_elementwise},
      {"schedule", "run order: each output's work as early as it can go", schedule},
  };
  return passes;
}

void run_passes(Graph& graph) {
  const char* dump = std::getenv("JANUS_DUMP_IR");
  const std::string_view want = dump == nullptr ? "" : dump;
  for (const PassInfo& pass : pass_pipeline()) {
    const PassStats stats = pass.run(graph);
    if (want == pass.name || want == "all") {
      std::cerr << "== JANUS_DUMP_IR after " << pass.name << " (" << stats.changed << " changed)\n"
                << Symbol(graph.outputs).summary();
    }
  }
}

}  // namespace janus::graph
