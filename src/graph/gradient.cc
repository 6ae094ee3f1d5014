// make_gradient_graphs: trace forward and the gradient rules together, then split the trace
// into what runs in the forward call and what runs in backward.
#include "janus/graph/gradient.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "janus/autograd/grad_rule.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/trace.h"
#include "janus/ops/ops.h"

namespace janus::graph {
namespace {

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
    const bool elementwise =
        op.fusion == ops::FusionClass::kElementwise || op.fusion == ops::FusionClass::kBroadcast;
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

// Step 1's result: one trace that holds forward, every gradient rule and the gradients of the
// arguments in wrt, with the roles of its variables.
struct JointTrace {
  Graph all;  // outputs: the graph's, then one gradient per entry of wrt
  std::unordered_map<const Node*, size_t> argument_of;   // variable -> argument position
  std::unordered_map<const Node*, size_t> head_grad_of;  // variable -> output position
};

// What a forward trace on placeholders computed: each node's values, and whether they depend
// on an argument in wrt.
struct TracedValues {
  std::unordered_map<const Node*, std::vector<NDArray>> value;
  std::unordered_map<const Node*, bool> needs;

  const NDArray& of(const NodeEntry& e) const { return value.at(e.node.get()).at(e.index); }
};

// Runs g's operators on the placeholders (inside the caller's TraceScope).
void trace_forward(const Graph& g, TracedValues& t) {
  for (const NodePtr& n : g.nodes) {
    if (n->is_variable()) {
      if (n->constant.defined()) {
        t.value[n.get()] = {n->constant};
        t.needs[n.get()] = false;
      }
      continue;
    }
    std::vector<NDArray> ins;
    bool any = false;
    for (const NodeEntry& e : n->inputs) {
      ins.push_back(t.of(e));
      any = any || t.needs.at(e.node.get());
    }
    t.value[n.get()] = ops::invoke(*n->op, ins, n->attrs);
    t.needs[n.get()] = any;
  }
}

// The reverse sweep: each node whose outputs got gradients and whose inputs need them, by its
// gradient rule. `grads` maps a placeholder's storage to its accumulated gradient.
void trace_backward(const Graph& g, const TracedValues& t,
                    std::unordered_map<const void*, NDArray>& grads) {
  static const ops::GradFn kNoRule;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    const Node& n = **it;
    if (n.is_variable() || !t.needs.at(&n)) continue;
    const std::vector<NDArray>& ys = t.value.at(&n);
    std::vector<NDArray> dys;
    bool any = false;
    for (const NDArray& y : ys) {
      auto git = grads.find(y.storage().get());
      any = any || git != grads.end();
      dys.push_back(git != grads.end() ? git->second : NDArray());
    }
    if (!any) continue;
    std::vector<NDArray> ins;
    std::vector<uint8_t> needed;
    for (const NodeEntry& e : n.inputs) {
      ins.push_back(t.of(e));
      needed.push_back(t.needs.at(e.node.get()) ? 1 : 0);
    }
    const std::vector<NDArray> dxs = autograd::apply_grad_rule(
        "gradient",
        {n.op->name, n.name, n.op->not_differentiable ? kNoRule : n.op->grad, ins, ys, n.attrs,
         needed},
        std::move(dys));
    for (size_t i = 0; i < dxs.size(); ++i) {
      if (!dxs[i].defined() || needed[i] == 0) continue;
      autograd::accumulate_grad(grads[ins[i].storage().get()], dxs[i]);
    }
  }
}

// Traces forward, then the gradient rules from the outputs' gradients (new inputs) back to the
// arguments in wrt, in one trace.
JointTrace trace_joint(const Graph& g, const std::vector<ops::TensorSpec>& arg_specs,
                       const std::vector<std::string>& wrt) {
  const std::vector<NodePtr> args = g.arguments();
  Tracer tracer;
  TracedValues t;
  JointTrace joint;
  for (size_t i = 0; i < args.size(); ++i) {
    const NDArray a = tracer.input(args[i]->name, arg_specs[i]);
    t.value[args[i].get()] = {a};
    t.needs[args[i].get()] = std::find(wrt.begin(), wrt.end(), args[i]->name) != wrt.end();
    joint.argument_of[tracer.input_node(a).get()] = i;
  }
  std::vector<NDArray> outputs;
  std::unordered_map<const void*, NDArray> grads;  // placeholder storage -> accumulated grad
  {
    TraceScope scope(tracer);
    trace_forward(g, t);
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      const NDArray y = t.of(g.outputs[i]);
      outputs.push_back(y);
      // The name is for dumps only: the role goes by node (head_grad_of).
      const NDArray hg =
          tracer.input(fmt::format("_head_grad{}", i), {y.shape(), y.dtype(), y.device()});
      joint.head_grad_of[tracer.input_node(hg).get()] = i;
      autograd::accumulate_grad(grads[y.storage().get()], hg);
    }
    trace_backward(g, t, grads);
    for (const std::string& name : wrt) {
      auto a =
          std::find_if(args.begin(), args.end(), [&](const NodePtr& n) { return n->name == name; });
      JANUS_CHECK(a != args.end(), ValueError, "gradient: '{}' is not an argument of the graph",
                  name);
      const NDArray& x = t.value.at(a->get())[0];
      auto git = grads.find(x.storage().get());
      outputs.push_back(git != grads.end() ? git->second : zeros(x.shape(), x.dtype(), x.device()));
    }
  }
  joint.all = tracer.finish(outputs).graph();
  return joint;
}

// The nodes that run in backward: those that depend on a head gradient, and the cheap ones that
// backward can recompute from what it keeps anyway.
std::unordered_set<const Node*> backward_nodes(const JointTrace& joint, size_t num_outputs) {
  std::unordered_set<const Node*> in_backward;
  for (const NodePtr& n : joint.all.nodes) {
    bool b = joint.head_grad_of.contains(n.get());
    for (const NodeEntry& e : n->inputs) b = b || in_backward.contains(e.node.get());
    if (b) in_backward.insert(n.get());
  }
  rematerialize_in_backward(joint.all, num_outputs, in_backward);
  return in_backward;
}

// Splits the joint trace into the forward graph (outputs, then saved values) and the backward
// graph (a copy of the backward nodes, reading forward values as saved variables), with the
// roles of both graphs' arguments.
GradientGraphs split_joint(const JointTrace& joint, const std::unordered_set<const Node*>& in_bwd,
                           size_t num_outputs) {
  const Graph& all = joint.all;
  std::vector<NodeEntry> fwd_outputs(
      all.outputs.begin(), all.outputs.begin() + static_cast<std::ptrdiff_t>(num_outputs));
  std::unordered_map<const Node*, BackwardArg> role;  // backward's variables
  for (const auto& [node, i] : joint.argument_of) role[node] = {BackwardArg::Kind::kInput, i};
  // Forward values that backward reads become its variables (saved values).
  std::unordered_map<NodeEntry, NodePtr, EntryHash> saved;
  auto saved_variable = [&](const NodeEntry& e) {
    auto [it, inserted] = saved.try_emplace(e, nullptr);
    if (inserted) {
      const size_t k = fwd_outputs.size() - num_outputs;
      it->second = std::make_shared<Node>();
      it->second->name = fmt::format("_saved{}", k);
      it->second->specs = {e.node->specs.at(e.index)};
      role[it->second.get()] = {BackwardArg::Kind::kSaved, k};
      fwd_outputs.push_back(e);
    }
    return NodeEntry{it->second, 0};
  };
  std::unordered_map<const Node*, NodePtr> copies;
  for (const NodePtr& n : all.nodes) {
    if (!in_bwd.contains(n.get())) continue;
    auto c = std::make_shared<Node>(*n);
    if (auto h = joint.head_grad_of.find(n.get()); h != joint.head_grad_of.end()) {
      role[c.get()] = {BackwardArg::Kind::kHeadGrad, h->second};
    }
    for (NodeEntry& e : c->inputs) {
      if (in_bwd.contains(e.node.get())) {
        e.node = copies.at(e.node.get());
        continue;
      }
      if (e.node->is_variable()) continue;  // arguments and constants are shared
      e = saved_variable(e);
    }
    copies[n.get()] = c;
  }
  std::vector<NodeEntry> bwd_outputs;
  for (size_t i = num_outputs; i < all.outputs.size(); ++i) {
    const NodeEntry& e = all.outputs[i];
    if (in_bwd.contains(e.node.get())) {
      bwd_outputs.push_back({copies.at(e.node.get()), e.index});
    } else if (e.node->is_variable()) {
      bwd_outputs.push_back(e);  // e.g. zeros folded to a constant
    } else {
      // A gradient that does not depend on the head gradients (a constant): computed in
      // forward and passed through as a saved value.
      bwd_outputs.push_back(saved_variable(e));
    }
  }
  GradientGraphs out;
  out.num_outputs = num_outputs;
  out.forward = Symbol(std::move(fwd_outputs));
  for (const NodePtr& n : out.forward.graph().arguments()) {
    out.forward_args.push_back(joint.argument_of.at(n.get()));
  }
  out.backward = Symbol(std::move(bwd_outputs));
  for (const NodePtr& n : out.backward.graph().arguments()) {
    auto r = role.find(n.get());
    JANUS_ASSERT(r != role.end(), "gradient: backward argument '{}' has no role", n->name);
    out.backward_args.push_back(r->second);
  }
  return out;
}

}  // namespace

GradientGraphs make_gradient_graphs(const Symbol& graph,
                                    const std::vector<ops::TensorSpec>& arg_specs,
                                    const std::vector<std::string>& wrt) {
  const Graph g = graph.graph();
  const size_t num_args = g.arguments().size();
  JANUS_CHECK(num_args == arg_specs.size(), ValueError,
              "gradient: the graph has {} arguments, got specs for {}", num_args, arg_specs.size());
  const JointTrace joint = trace_joint(g, arg_specs, wrt);
  GradientGraphs out =
      split_joint(joint, backward_nodes(joint, g.outputs.size()), g.outputs.size());
  out.wrt = wrt;
  return out;
}

}  // namespace janus::graph
