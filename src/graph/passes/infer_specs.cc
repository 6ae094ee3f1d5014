// Pass infer_shape: shapes and dtypes of every entry, from the arguments' specs.
#include "janus/base/error.h"
#include "janus/graph/passes.h"

namespace janus::graph {

PassStats infer_specs(Graph& graph) {
  PassStats stats;
  for (const NodePtr& n : graph.nodes) {
    if (n->is_variable()) {
      if (n->constant.defined()) {
        n->specs = {
            ops::TensorSpec{n->constant.shape(), n->constant.dtype(), n->constant.device()}};
      }
      JANUS_CHECK(!n->specs.empty(), ShapeError,
                  "infer_shape: the shape of variable '{}' is unknown; give it when declaring the "
                  "variable or when binding",
                  n->name);
      continue;
    }
    std::vector<ops::TensorSpec> in;
    for (const NodeEntry& e : n->inputs) {
      JANUS_ASSERT(e.index < e.node->specs.size(), "entry {} of '{}' has no spec", e.index,
                   e.node->name);
      in.push_back(e.node->specs[e.index]);
    }
    try {
      n->specs = n->op->infer(ops::InferArgs{*n->op, in, n->attrs});
    } catch (Error& e) {
      e.add_context(fmt::format("infer_shape: node '{}'", n->name));
      throw;
    }
    ++stats.changed;
  }
  return stats;
}

}  // namespace janus::graph
