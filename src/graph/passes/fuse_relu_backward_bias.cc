// Pass fuse_relu_backward_bias: relu_backward(y, dy) of a [rows, columns] array whose result a
// sum over axis 0 reads (the gradient of a fully_connected layer with relu and its bias, as
// fully_connected's gradient rule writes it) becomes one relu_backward_bias call: one pass
// over y and dy instead of a second one over dx, and one call fewer. The relu_backward node
// becomes the fused call in place (its output 0 is dx still, so its readers need no rewiring);
// the readers of the sum read the fused call's output 1 instead. The kernel gives the bits of
// the two calls, so a fused graph computes exactly what imperative code does.
#include <unordered_map>

#include "janus/graph/passes.h"
#include "janus/ops/registry.h"

#include "replace_nodes.h"

namespace janus::graph {
namespace {

// sum(x, axes=[0], keepdims=false) of a 2-D x: the bias gradient of fully_connected.
bool sums_rows(const Node& n) {
  if (n.is_variable() || n.op->name != "sum" || n.inputs.size() != 1) return false;
  if (n.inputs[0].node->specs.empty() || n.inputs[0].node->specs[0].shape.ndim() != 2) {
    return false;
  }
  const int axes = n.op->attr_index("axes"), keepdims = n.op->attr_index("keepdims");
  if (axes < 0 || keepdims < 0) return false;
  ops::Attrs attrs = n.attrs;
  ops::complete_attrs(*n.op, attrs);
  const auto& a = std::get<std::vector<int64_t>>(attrs.values()[static_cast<size_t>(axes)]);
  const bool keep = std::get<bool>(attrs.values()[static_cast<size_t>(keepdims)]);
  return !keep && (a == std::vector<int64_t>{0} || a == std::vector<int64_t>{-2});
}

}  // namespace

PassStats fuse_relu_backward_bias(Graph& graph) {
  static const ops::OpDef& fused = ops::get_op("relu_backward_bias");
  PassStats stats;
  // The sum to fuse into each relu_backward (the first one that reads it).
  std::unordered_map<const Node*, Node*> sum_of;
  for (const NodePtr& n : graph.nodes) {
    if (!sums_rows(*n)) continue;
    const NodeEntry& in = n->inputs[0];
    const Node& producer = *in.node;
    if (producer.is_variable() || producer.op->name != "relu_backward" || in.index != 0) continue;
    const DType dtype = producer.specs.at(0).dtype;
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64) continue;
    sum_of.try_emplace(&producer, n.get());
  }
  if (sum_of.empty()) return stats;
  // Where each fused sum's readers now read: output 1 of the fused call.
  std::unordered_map<const Node*, NodeEntry> moved;
  for (const NodePtr& n : graph.nodes) {
    const auto it = sum_of.find(n.get());
    if (it == sum_of.end()) continue;
    Node& sum = *it->second;
    n->op = &fused;
    n->attrs = ops::Attrs{};
    ops::complete_attrs(fused, n->attrs);
    n->specs = {n->specs.at(0), sum.specs.at(0)};
    moved.emplace(&sum, NodeEntry{n, 1});
    ++stats.changed;
  }
  replace_nodes(graph, moved);
  return stats;
}

}  // namespace janus::graph
