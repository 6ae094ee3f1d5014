// Pass fuse_max_pool_relu_backward: relu_backward(x, max_pool2d_backward(x, dy)), relu's
// gradient through the max pooling that reads relu's output x (a convolution with relu, then
// pooling, as in LeNet), becomes one max_pool2d_relu_backward call that scatters each window's
// dy to its maximum and applies relu's mask in the same pass, instead of writing the pooling's
// gradient and reading it back. When a conv2d_backward_bias reads the result (the
// convolution's bias gradient), the fused call computes it too, each plane's sum while the
// plane is in cache. The relu_backward node becomes the fused call in place (its output 0 is dx
// still); the bias sum's readers read output 1. It fires only where the pooling's gradient has
// no other reader (it is not kept). The kernel gives the bits of the calls it replaces.
#include <unordered_map>
#include <unordered_set>

#include "janus/graph/passes.h"
#include "janus/ops/registry.h"

#include "replace_nodes.h"

namespace janus::graph {
namespace {

bool is_op(const Node& n, std::string_view name) { return !n.is_variable() && n.op->name == name; }

}  // namespace

PassStats fuse_max_pool_relu_backward(Graph& graph) {
  static const ops::OpDef& fused = ops::get_op("max_pool2d_relu_backward");
  PassStats stats;
  // How many times each max_pool2d_backward's result is read (by nodes and as an output).
  std::unordered_map<const Node*, int> reads;
  for (const NodePtr& n : graph.nodes) {
    for (const NodeEntry& e : n->inputs) ++reads[e.node.get()];
  }
  for (const NodeEntry& e : graph.outputs) ++reads[e.node.get()];
  // relu_backward -> the max_pool2d_backward whose result it masks with the pooling's input.
  std::unordered_map<const Node*, Node*> pool_of;
  for (const NodePtr& n : graph.nodes) {
    if (!is_op(*n, "relu_backward") || n->inputs.size() != 2) continue;
    const NodeEntry& d = n->inputs[1];
    if (!is_op(*d.node, "max_pool2d_backward") || d.node->inputs.size() != 2) continue;
    if (!(d.node->inputs[0] == n->inputs[0]) || reads[d.node.get()] != 1) continue;
    if (n->specs.empty() || d.node->specs.empty()) continue;
    const DType dtype = n->specs[0].dtype;
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64) continue;
    pool_of.emplace(n.get(), d.node.get());
  }
  if (pool_of.empty()) return stats;
  // The bias sum to fold into each (the first conv2d_backward_bias that reads it).
  std::unordered_map<const Node*, Node*> bias_of;
  for (const NodePtr& n : graph.nodes) {
    if (!is_op(*n, "conv2d_backward_bias") || n->inputs.size() != 1) continue;
    const NodeEntry& in = n->inputs[0];
    if (in.index == 0 && pool_of.contains(in.node.get()))
      bias_of.try_emplace(in.node.get(), n.get());
  }
  // Where each folded bias sum's readers now read: output 1 of the fused call.
  std::unordered_map<const Node*, NodeEntry> moved;
  std::unordered_set<const Node*> removed;
  for (const NodePtr& n : graph.nodes) {
    const auto it = pool_of.find(n.get());
    if (it == pool_of.end()) continue;
    const Node& pool = *it->second;
    const ops::TensorSpec x = n->specs.at(0);
    n->op = &fused;
    n->attrs = pool.attrs;
    ops::complete_attrs(fused, n->attrs);
    n->inputs = {n->inputs[0], pool.inputs[1]};
    n->specs = {x, ops::TensorSpec{Shape{x.shape[1]}, x.dtype, x.device}};
    removed.insert(&pool);
    const auto bias = bias_of.find(n.get());
    if (bias != bias_of.end()) moved.emplace(bias->second, NodeEntry{n, 1});
    ++stats.changed;
  }
  replace_nodes(graph, moved, removed);
  return stats;
}

}  // namespace janus::graph
