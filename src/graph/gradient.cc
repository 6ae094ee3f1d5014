// make_gradient_graphs: trace forward and the gradient rules together, then split the trace
// into what runs in the forward call and what runs in backward.
#include "janus/graph/gradient.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/trace.h"
#include "janus/ops/ops.h"

namespace janus::graph {
namespace {

constexpr std::string_view kHeadGrad = "_head_grad";
constexpr std::string_view kSaved = "_saved";

struct EntryHash {
  size_t operator()(const NodeEntry& e) const {
    return std::hash<const void*>()(e.node.get()) ^ (e.index * 0x9e3779b97f4a7c15ULL);
  }
};

// Moves into backward the cheap forward nodes whose outputs only backward reads and whose
// inputs backward keeps anyway: an elementwise, non-random node (abs's sign(x)) whose every
// input is a variable, a constant-like source (zeros) or a forward value that
// another backward node reads too.
// Saving such a node's output would only add memory; backward recomputes it from what it has.
void rematerialize_in_backward(const Graph& all, size_t num_forward_outputs,
                               std::unordered_set<const Node*>& in_backward) {
  std::unordered_map<const Node*, int> forward_readers, backward_readers;
  for (const NodePtr& n : all.nodes) {
    for (const NodeEntry& e : n->inputs) {
      ++(in_backward.contains(n.get()) ? backward_readers : forward_readers)[e.node.get()];
    }
  }
  for (size_t i = 0; i < num_forward_outputs; ++i) ++forward_readers[all.outputs[i].node.get()];
  for (const NodePtr& n : all.nodes) {
    if (n->is_variable() || in_backward.contains(n.get()) || forward_readers[n.get()] > 0 ||
        backward_readers[n.get()] == 0) {
      continue;
    }
    const ops::OpDef& op = *n->op;
    const bool elementwise = op.fusion == ops::FusionClass::kElementwise ||
                             op.fusion == ops::FusionClass::kBroadcast;
    if (!elementwise || op.random || op.outputs.size() != 1 || !op.mutable_inputs.empty()) continue;
    bool inputs_kept = true;
    for (const NodeEntry& e : n->inputs) {
      const Node& in = *e.node;
      const bool source = !in.is_variable() && in.inputs.empty() && !in.op->random;  // zeros
      inputs_kept = inputs_kept && (in.is_variable() || source || backward_readers[&in] > 0);
    }
    if (!inputs_kept) continue;
    in_backward.insert(n.get());
    for (const NodeEntry& e : n->inputs) ++backward_readers[e.node.get()];
  }
}

}  // namespace

GradientGraphs make_gradient_graphs(const Symbol& graph,
                                    const std::vector<ops::TensorSpec>& arg_specs,
                                    const std::vector<std::string>& wrt) {
  const Graph g = graph.graph();
  const std::vector<NodePtr> args = g.arguments();
  JANUS_CHECK(args.size() == arg_specs.size(), ValueError,
              "gradient: the graph has {} arguments, got specs for {}", args.size(),
              arg_specs.size());
  // 1. Trace forward then backward on placeholders, in one trace.
  Tracer tracer;
  std::unordered_map<const Node*, std::vector<NDArray>> value;  // forward node -> its values
  std::unordered_map<const Node*, bool> needs;                  // depends on an argument in wrt
  std::vector<NDArray> arg_values;
  for (size_t i = 0; i < args.size(); ++i) {
    value[args[i].get()] = {tracer.input(args[i]->name, arg_specs[i])};
    needs[args[i].get()] = std::find(wrt.begin(), wrt.end(), args[i]->name) != wrt.end();
    arg_values.push_back(value[args[i].get()][0]);
  }
  std::vector<NDArray> outputs;
  std::vector<NDArray> head_grads;
  std::unordered_map<const void*, NDArray> grads;  // placeholder storage -> accumulated grad
  {
    TraceScope scope(tracer);
    for (const NodePtr& n : g.nodes) {
      if (n->is_variable()) {
        if (n->constant.defined()) {
          value[n.get()] = {n->constant};
          needs[n.get()] = false;
        }
        continue;
      }
      std::vector<NDArray> ins;
      bool any = false;
      for (const NodeEntry& e : n->inputs) {
        ins.push_back(value.at(e.node.get()).at(e.index));
        any = any || needs.at(e.node.get());
      }
      value[n.get()] = ops::invoke(*n->op, ins, n->attrs);
      needs[n.get()] = any;
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const NodeEntry& e = g.outputs[i];
      const NDArray y = value.at(e.node.get()).at(e.index);
      outputs.push_back(y);
      const NDArray hg =
          tracer.input(fmt::format("{}{}", kHeadGrad, i), {y.shape(), y.dtype(), y.device()});
      head_grads.push_back(hg);
      auto& slot = grads[y.storage().get()];
      slot = slot.defined() ? add(slot, hg) : hg;
    }
    // Reverse walk: each node whose outputs got gradients and whose inputs need them.
    for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
      const NodePtr& n = *it;
      if (n->is_variable() || !needs.at(n.get())) continue;
      const std::vector<NDArray>& ys = value.at(n.get());
      std::vector<NDArray> dys;
      bool any = false;
      for (const NDArray& y : ys) {
        auto git = grads.find(y.storage().get());
        any = any || git != grads.end();
        dys.push_back(git != grads.end() ? git->second : NDArray());
      }
      if (!any) continue;
      JANUS_CHECK(!n->op->not_differentiable && n->op->grad, NotImplementedError,
                  "gradient: operator '{}' (node '{}') is not differentiable, but an output "
                  "depends on it through an argument that needs a gradient",
                  n->op->name, n->name);
      for (size_t i = 0; i < dys.size(); ++i) {
        if (!dys[i].defined()) dys[i] = zeros(ys[i].shape(), ys[i].dtype(), ys[i].device());
      }
      std::vector<NDArray> ins;
      std::vector<uint8_t> needed;
      for (const NodeEntry& e : n->inputs) {
        ins.push_back(value.at(e.node.get()).at(e.index));
        needed.push_back(needs.at(e.node.get()) ? 1 : 0);
      }
      const std::vector<NDArray> dxs =
          n->op->grad(ops::GradArgs{ins, ys, dys, n->attrs, needed});
      JANUS_ASSERT(dxs.size() == ins.size(), "gradient of '{}' gave {} arrays for {} inputs",
                   n->op->name, dxs.size(), ins.size());
      for (size_t i = 0; i < dxs.size(); ++i) {
        if (!dxs[i].defined() || !needs.at(n->inputs[i].node.get())) continue;
        auto& slot = grads[ins[i].storage().get()];
        slot = slot.defined() ? add(slot, dxs[i]) : dxs[i];
      }
    }
    for (const std::string& name : wrt) {
      auto a =
          std::find_if(args.begin(), args.end(), [&](const NodePtr& n) { return n->name == name; });
      JANUS_CHECK(a != args.end(), ValueError, "gradient: '{}' is not an argument of the graph",
                  name);
      const NDArray& x = value.at(a->get())[0];
      auto git = grads.find(x.storage().get());
      outputs.push_back(git != grads.end() ? git->second : zeros(x.shape(), x.dtype(), x.device()));
    }
  }
  const Symbol traced = tracer.finish(outputs);

  // 2. Split: nodes that depend on a head gradient run in backward, the others in forward,
  // except the cheap ones that backward can recompute from what it keeps anyway.
  const Graph all = traced.graph();
  std::unordered_set<const Node*> in_backward;
  for (const NodePtr& n : all.nodes) {
    bool b = n->is_variable() && n->name.starts_with(kHeadGrad);
    for (const NodeEntry& e : n->inputs) b = b || in_backward.contains(e.node.get());
    if (b) in_backward.insert(n.get());
  }
  rematerialize_in_backward(all, g.outputs.size(), in_backward);
  GradientGraphs out;
  out.wrt = wrt;
  out.num_outputs = g.outputs.size();
  std::vector<NodeEntry> fwd_outputs(
      all.outputs.begin(), all.outputs.begin() + static_cast<std::ptrdiff_t>(g.outputs.size()));
  // Forward values that backward reads become its variables "_saved<k>".
  std::unordered_map<NodeEntry, NodePtr, EntryHash> saved;
  auto saved_variable = [&](const NodeEntry& e) {
    auto [it, inserted] = saved.try_emplace(e, nullptr);
    if (inserted) {
      it->second = std::make_shared<Node>();
      it->second->name = fmt::format("{}{}", kSaved, fwd_outputs.size() - g.outputs.size());
      it->second->specs = {e.node->specs.at(e.index)};
      fwd_outputs.push_back(e);
    }
    return NodeEntry{it->second, 0};
  };
  std::unordered_map<const Node*, NodePtr> copies;
  for (const NodePtr& n : all.nodes) {
    if (!in_backward.contains(n.get())) continue;
    auto c = std::make_shared<Node>(*n);
    for (NodeEntry& e : c->inputs) {
      if (in_backward.contains(e.node.get())) {
        e.node = copies.at(e.node.get());
        continue;
      }
      if (e.node->is_variable()) continue;  // arguments and constants are shared
      e = saved_variable(e);
    }
    copies[n.get()] = c;
  }
  std::vector<NodeEntry> bwd_outputs;
  for (size_t i = g.outputs.size(); i < all.outputs.size(); ++i) {
    const NodeEntry& e = all.outputs[i];
    if (in_backward.contains(e.node.get())) {
      bwd_outputs.push_back({copies.at(e.node.get()), e.index});
    } else if (e.node->is_variable()) {
      bwd_outputs.push_back(e);  // e.g. zeros folded to a constant
    } else {
      // A gradient that does not depend on the head gradients (a constant): computed in
      // forward and passed through as a saved value.
      bwd_outputs.push_back(saved_variable(e));
    }
  }
  out.forward = Symbol(std::move(fwd_outputs));
  out.backward = Symbol(std::move(bwd_outputs));
  return out;
}

}  // namespace janus::graph
