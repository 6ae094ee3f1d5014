// Pass fuse_conv_avg_pool: an avg_pool2d of 2x2 windows with stride 2 whose input is a conv2d
// read by nothing else becomes one conv2d call with avg_pool_2x2 set: the convolution pools its
// (activated) result while it is in cache and writes only the pooled values, instead of writing
// the whole result for the pooling call to read back (LeNet's first layer: 1.2 MB at batch 64).
// The pooling sums each window as avg_pool2d does (ops/nn/pool.h's avg_2x2), so the fused graph
// gives bit for bit what the separate calls give. It runs after fuse_bias_activation, whose
// activation then sits between the two inside the call. A convolution whose result something
// else reads (a training graph's gradient of its activation, or a graph output) stays apart,
// since the fused call no longer computes that result.
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "janus/graph/passes.h"

#include "readers.h"
#include "replace_nodes.h"

namespace janus::graph {
namespace {

// Attribute `name` of `op` in the complete list `attrs`.
template <typename T>
const T& attr(const ops::OpDef& op, const ops::Attrs& attrs, std::string_view name) {
  return attrs.get<T>(static_cast<size_t>(op.attr_index(name)));
}

// One or two values, all `want`.
bool all_are(const std::vector<int64_t>& v, int64_t want) {
  return (v.size() == 1 || v.size() == 2) &&
         std::ranges::all_of(v, [&](int64_t e) { return e == want; });
}

// Whether avg_pool2d `n` averages exactly the windows of conv2d's avg_pool_2x2 over its input
// of shape x [N, C, H, W]: kernel 2x2, stride 2 (or the kernel's), no padding (so the divisor is
// 4 whatever count_include_pad says), and in ceil mode even extents (an odd one would add a
// partial last window; in floor mode it drops the last row or column, as the fused call does).
bool pools_2x2_windows(const Node& n, const Shape& x) {
  ops::Attrs attrs = n.attrs;
  ops::complete_attrs(*n.op, attrs);
  const auto& stride = attr<std::vector<int64_t>>(*n.op, attrs, "stride");
  if (!all_are(attr<std::vector<int64_t>>(*n.op, attrs, "kernel_size"), 2) ||
      !(stride.empty() || all_are(stride, 2)) ||
      !all_are(attr<std::vector<int64_t>>(*n.op, attrs, "padding"), 0)) {
    return false;
  }
  return !attr<bool>(*n.op, attrs, "ceil_mode") || (x[2] % 2 == 0 && x[3] % 2 == 0);
}

}  // namespace

PassStats fuse_conv_avg_pool(Graph& graph) {
  std::unordered_map<const Node*, int> readers = reader_counts(graph);
  PassStats stats;
  std::unordered_set<const Node*> dropped;
  for (const NodePtr& n : graph.nodes) {
    if (n->is_variable() || n->op->name != "avg_pool2d") continue;
    const NodePtr conv = n->inputs[0].node;  // a copy: n->inputs is replaced below
    if (conv->is_variable() || conv->op->name != "conv2d" || readers[conv.get()] != 1 ||
        conv->specs.empty() || !pools_2x2_windows(*n, conv->specs[0].shape)) {
      continue;
    }
    ops::Attrs attrs = conv->attrs;
    ops::complete_attrs(*conv->op, attrs);
    bool& pooled =
        std::get<bool>(attrs.values()[static_cast<size_t>(conv->op->attr_index("avg_pool_2x2"))]);
    if (pooled) continue;
    pooled = true;
    n->op = conv->op;
    n->attrs = std::move(attrs);
    n->inputs = conv->inputs;
    dropped.insert(conv.get());
    ++stats.changed;
  }
  replace_nodes(graph, {}, dropped);
  return stats;
}

}  // namespace janus::graph
