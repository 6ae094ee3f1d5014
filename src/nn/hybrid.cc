// Hybridization of blocks: trace forward once per input signature, cache the compiled graph,
// run it; export it with the parameters.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/base/logging.h"
#include "janus/engine/array.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/gradient.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/trace.h"
#include "janus/nn/block.h"
#include "janus/ops/shape.h"

#include "hybrid_state.h"

namespace janus::nn {
namespace {

// The block whose default list-form forward is running the one-array form on this thread: if
// that one is the default too, the block overrides neither.
thread_local const Block* t_default_forward = nullptr;

graph::CachedOpOptions cached_op_options(const HybridizeOptions& o) {
  return {o.static_alloc, o.static_shape};
}

// Traces block.forward on placeholders of the inputs xs and compiles the graph; logs `reason`.
std::shared_ptr<HybridEntry> trace_entry(Block& block, const std::vector<NDArray>& xs,
                                         const HybridizeOptions& options,
                                         const std::string& reason) {
  const ParameterDict params = block.collect_params();
  graph::Tracer tracer([&params](const NDArray& a) -> std::optional<std::string> {
    for (const auto& [name, p] : params) {
      if (!p->initialized()) continue;
      for (const NDArray& replica : p->list_data()) {
        if (replica.storage() == a.storage()) return name;
      }
    }
    return std::nullopt;
  });
  const std::vector<std::string> input_names = graph::default_input_names(xs.size());
  std::vector<NDArray> placeholders;
  for (size_t i = 0; i < xs.size(); ++i) {
    placeholders.push_back(
        tracer.input(input_names[i], {xs[i].shape(), xs[i].dtype(), xs[i].device()}));
  }
  std::vector<NDArray> ys;
  {
    graph::TraceScope scope(tracer);
    ys = block.forward(placeholders);
  }
  JANUS_CHECK(!ys.empty(), ValueError, "{}: forward gave no outputs", block.name());
  auto entry = std::make_shared<HybridEntry>();
  entry->symbol = tracer.finish(ys);
  // An input that forward does not read is no argument of the graph.
  entry->binding = graph::bind_arguments(entry->symbol.list_arguments(), input_names, block.name(),
                                         /*require_inputs=*/false);
  std::vector<NDArray> values;
  for (const std::string& name : entry->binding.parameter_names) {
    entry->params.push_back(params.at(name));
    values.push_back(entry->params.back()->data(xs[0].device()));
  }
  for (const NDArray& a : entry->binding.gather(xs, values)) {
    entry->arg_specs.push_back({a.shape(), a.dtype(), a.device()});
  }
  JANUS_LOG(kInfo, "hybridize: {} traced: {}; {} operators", block.name(), reason,
            tracer.recorded());
  return entry;
}

// The training graphs of an entry: differentiated with respect to the parameters that take
// gradients and the inputs that need one (input_grads), each compiled.
std::shared_ptr<TrainPlan> make_train_plan(const HybridEntry& entry,
                                           const std::vector<bool>& input_grads,
                                           const graph::CachedOpOptions& options) {
  auto plan = std::make_shared<TrainPlan>();
  const std::vector<std::string> names = entry.symbol.list_arguments();
  std::vector<std::string> wrt;
  for (size_t i = 0; i < names.size(); ++i) {
    const graph::ArgumentSource& src = entry.binding.sources[i];
    const bool wanted = src.kind == graph::ArgumentSource::Kind::kInput
                            ? input_grads[src.index]
                            : entry.params[src.index]->grad_req() != autograd::GradReq::kNull;
    if (!wanted) continue;
    wrt.push_back(names[i]);
    plan->wrt_index.push_back(i);
  }
  const std::vector<ops::TensorSpec>& specs = entry.arg_specs;
  const graph::GradientGraphs gg = graph::make_gradient_graphs(entry.symbol, specs, wrt);
  plan->num_outputs = gg.num_outputs;
  plan->forward_args = gg.forward_args;
  std::vector<ops::TensorSpec> fspecs;
  for (size_t a : gg.forward_args) fspecs.push_back(specs[a]);
  plan->forward = std::make_shared<graph::CachedOp>(gg.forward, std::move(fspecs), options);
  plan->backward_args = gg.backward_args;
  const std::vector<ops::TensorSpec>& fouts = plan->forward->output_specs();
  std::vector<ops::TensorSpec> bspecs;
  for (const graph::BackwardArg& a : gg.backward_args) {
    switch (a.kind) {
      case graph::BackwardArg::Kind::kInput:
        bspecs.push_back(specs[a.index]);
        break;
      case graph::BackwardArg::Kind::kSaved:
        bspecs.push_back(fouts[gg.num_outputs + a.index]);
        break;
      case graph::BackwardArg::Kind::kHeadGrad:
        bspecs.push_back(fouts[a.index]);
        break;
    }
  }
  plan->backward = std::make_shared<graph::CachedOp>(gg.backward, std::move(bspecs), options);
  return plan;
}

// Per gradient of backward: the buffer its argument's gradient overwrites (a parameter's, with
// grad_req write), for backward to write straight into; undefined where there is none, or where
// it is not its own (it shares storage with an argument or with another one).
std::vector<NDArray> gradient_buffers(const TrainPlan& plan, const std::vector<NDArray>& args) {
  std::vector<NDArray> buffers;
  for (size_t i : plan.wrt_index) {
    NDArray b = autograd::overwritten_grad(args[i]);
    auto same = [&b](const NDArray& a) { return a.defined() && a.storage() == b.storage(); };
    if (b.defined() && (std::any_of(args.begin(), args.end(), same) ||
                        std::any_of(buffers.begin(), buffers.end(), same))) {
      b = NDArray();
    }
    buffers.push_back(std::move(b));
  }
  return buffers;
}

// The gradients of the entry's arguments: backward's arguments gathered by their roles. A
// gradient with a buffer is written into it: backward then stores nothing more (no copy).
std::vector<NDArray> run_backward(const TrainPlan& plan, const ops::GradArgs& ga,
                                  const std::vector<NDArray>& saved, std::vector<NDArray> buffers) {
  std::vector<NDArray> bargs;
  for (const graph::BackwardArg& a : plan.backward_args) {
    switch (a.kind) {
      case graph::BackwardArg::Kind::kInput:
        bargs.push_back(ga.x(a.index));
        break;
      case graph::BackwardArg::Kind::kSaved:
        bargs.push_back(saved.at(a.index));
        break;
      case graph::BackwardArg::Kind::kHeadGrad:
        bargs.push_back(ga.dy(a.index));
        break;
    }
  }
  // A head gradient the caller gave may be anything, even a gradient buffer; and a block called
  // twice while recording has two backward calls of which only one may write a buffer.
  for (NDArray& b : buffers) {
    auto same = [&b](const NDArray& a) { return b.defined() && a.storage() == b.storage(); };
    if (std::any_of(bargs.begin(), bargs.end(), same) || !autograd::claim_grad_buffer(b)) {
      b = NDArray();
    }
  }
  const std::vector<NDArray> grads = (*plan.backward)(bargs, buffers);
  std::vector<NDArray> out(ga.inputs.size());
  for (size_t j = 0; j < plan.wrt_index.size(); ++j) out[plan.wrt_index[j]] = grads[j];
  return out;
}

// A recorded call: the forward graph also returns what backward needs, and backward is one
// compiled graph too, recorded as one autograd node.
std::vector<NDArray> run_recorded(const std::string& name, HybridEntry& entry,
                                  const std::vector<NDArray>& xs, const std::vector<NDArray>& args,
                                  const graph::CachedOpOptions& options) {
  std::vector<bool> input_grads;
  for (const NDArray& x : xs) input_grads.push_back(autograd::requires_grad(x));
  std::shared_ptr<TrainPlan>& plan = entry.train[input_grads];
  if (!plan) plan = make_train_plan(entry, input_grads, options);
  std::vector<NDArray> fargs;
  for (size_t a : plan->forward_args) fargs.push_back(args[a]);
  std::vector<NDArray> outs = (*plan->forward)(fargs);
  const auto split = outs.begin() + static_cast<std::ptrdiff_t>(plan->num_outputs);
  std::vector<NDArray> ys(outs.begin(), split);
  // An output that is an argument (forward returned an input or a parameter as it is) or an
  // earlier output: a handle of its own, so that recording gives it this node's history
  // without taking the argument's (a leaf's gradient buffer) or the other output's.
  for (size_t i = 0; i < ys.size(); ++i) {
    auto same = [&](const NDArray& a) { return a.storage() == ys[i].storage(); };
    if (std::any_of(args.begin(), args.end(), same) ||
        std::any_of(ys.begin(), ys.begin() + static_cast<std::ptrdiff_t>(i), same)) {
      ys[i] = ys[i].detach();
    }
  }
  // Detached: a saved value may be an output itself (relu's gradient reads its output), and the
  // outputs get this node's autograd history: captured as is, the node would hold itself alive.
  std::vector<NDArray> saved;
  for (auto it = split; it != outs.end(); ++it) saved.push_back(it->detach());
  // Taken now, as the tape takes where each argument's gradient goes.
  std::vector<NDArray> buffers = gradient_buffers(*plan, args);
  autograd::record_function(
      fmt::format("hybridized {}", name), args, ys,
      // The tape hands back the arguments (detached) as ga.inputs.
      [plan, saved = std::move(saved), buffers = std::move(buffers)](const ops::GradArgs& ga) {
        return run_backward(*plan, ga, saved, buffers);
      });
  return ys;
}

}  // namespace

Block::~Block() = default;

std::vector<NDArray> Block::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(xs.size() == 1, ValueError,
              "{}: forward takes one input, got {}; a block with several inputs overrides "
              "forward(const std::vector<NDArray>&)",
              name_, xs.size());
  const Block* outer = t_default_forward;
  t_default_forward = this;
  struct Restore {
    const Block* outer;
    ~Restore() { t_default_forward = outer; }
  } restore{outer};
  return {forward(xs[0])};
}

NDArray Block::forward(const NDArray& x) {
  JANUS_CHECK(t_default_forward != this, NotImplementedError,
              "{}: the block overrides neither form of forward", name_);
  std::vector<NDArray> ys = forward(std::vector<NDArray>{x});
  JANUS_CHECK(ys.size() == 1, ValueError,
              "{}: forward gave {} outputs; call the block with a list of inputs to get them all",
              name_, ys.size());
  return ys[0];
}

NDArray Block::operator()(const NDArray& x) {
  // Imperative, or inside the trace of an enclosing hybridized block (which records this
  // block's operators into its own graph).
  if (!is_hybridized() || graph::is_tracing()) return forward(x);
  std::vector<NDArray> ys = call_hybridized({x});
  JANUS_CHECK(ys.size() == 1, ValueError,
              "{}: forward gave {} outputs; call the block with a list of inputs to get them all",
              name_, ys.size());
  return ys[0];
}

std::vector<NDArray> Block::operator()(const std::vector<NDArray>& xs) {
  if (!is_hybridized() || graph::is_tracing()) return forward(xs);
  return call_hybridized(xs);
}

std::vector<NDArray> Block::call_hybridized(const std::vector<NDArray>& xs) {
  HybridState& h = *hybrid_;
  JANUS_CHECK(!xs.empty(), ValueError, "{}: a hybridized block takes at least one input", name_);
  for (size_t i = 0; i < xs.size(); ++i) {
    JANUS_CHECK(xs[i].defined(), ValueError, "{}: input {} is undefined", name_, i);
  }
  graph::InputSignature sig = graph::InputSignature::of(xs, autograd::is_training());
  std::shared_ptr<HybridEntry> entry = h.cache.find(sig);
  if (!entry) {
    h.reason = h.cache.empty() ? fmt::format("first call ({})", sig.to_string())
                               : fmt::format("new input signature {} (cached: {})", sig.to_string(),
                                             h.last_sig ? h.last_sig->to_string() : "none");
    entry = h.cache.insert(sig, trace_entry(*this, xs, h.options, h.reason));
  }
  h.last = entry;
  h.last_sig = std::move(sig);
  std::vector<NDArray> values;
  values.reserve(entry->params.size());
  bool any_grad = false;
  // The replicas on the inputs' device: the signature holds the device, so each device has its
  // own compiled graph bound to its own replicas.
  const Device device = xs.at(0).device();
  for (const ParameterPtr& p : entry->params) {
    values.push_back(p->data(device));
    any_grad = any_grad || autograd::requires_grad(values.back());
  }
  for (const NDArray& x : xs) any_grad = any_grad || autograd::requires_grad(x);
  const std::vector<NDArray> args = entry->binding.gather(xs, values);
  if (!autograd::is_recording() || !any_grad) {
    if (!entry->op) {
      entry->op = std::make_shared<graph::CachedOp>(entry->symbol, entry->arg_specs,
                                                    cached_op_options(h.options));
    }
    return (*entry->op)(args);
  }
  return run_recorded(name_, *entry, xs, args, cached_op_options(h.options));
}

void Block::hybridize(bool active, const HybridizeOptions& options) {
  JANUS_CHECK(options.cache_size > 0, ValueError, "{}: hybridize: cache_size must be at least 1",
              name_);
  if (!hybrid_) hybrid_ = std::make_unique<HybridState>();
  HybridState& h = *hybrid_;
  const bool changed = h.options.static_alloc != options.static_alloc ||
                       h.options.static_shape != options.static_shape;
  h.active = active;
  h.options = options;
  h.cache.set_capacity(options.cache_size);
  if (changed || !active) {
    h.cache.clear();
    h.last = nullptr;
    h.last_sig.reset();
  }
  for (auto& [local, child] : children_) child->hybridize(active, options);
}

bool Block::is_hybridized() const { return hybrid_ && hybrid_->active; }
int64_t Block::trace_count() const { return hybrid_ ? hybrid_->cache.compilations() : 0; }
std::string Block::last_trace_reason() const { return hybrid_ ? hybrid_->reason : ""; }

graph::Symbol Block::symbol() const {
  JANUS_CHECK(hybrid_ && hybrid_->last != nullptr, ValueError,
              "{}: no graph yet: call hybridize() and then the block once", name_);
  return hybrid_->last->symbol;
}

void Block::export_model(const std::string& prefix, int epoch) const {
  const graph::Symbol sym = symbol();
  JANUS_CHECK(epoch >= 0 && epoch <= 9999, ValueError, "{}: export: epoch {} must be in [0, 9999]",
              name_, epoch);
  const HybridEntry& entry = *hybrid_->last;
  const std::vector<std::string>& pnames = entry.binding.parameter_names;
  // The replicas that this graph ran with (those of its inputs' device): after data-parallel
  // training they equal the other devices' replicas, but they are the ones the graph belongs to.
  const Device device = hybrid_->last_sig->inputs.at(0).device;
  graph::NamedArrays arrays;
  for (const graph::NodePtr& n : sym.graph().nodes) {
    if (!n->is_variable()) continue;
    if (n->constant.defined()) {
      arrays.emplace_back(n->name, n->constant);
      continue;
    }
    auto p = std::find(pnames.begin(), pnames.end(), n->name);
    if (p != pnames.end())
      arrays.emplace_back(n->name, entry.params[p - pnames.begin()]->data(device));
  }
  const std::vector<std::string> inputs =
      graph::default_input_names(hybrid_->last_sig->inputs.size());
  sym.save(prefix + "-symbol.json");
  graph::save_safetensors(
      fmt::format("{}-{:04d}.safetensors", prefix, epoch), arrays,
      {{"format", "janus.params"}, {"inputs", fmt::format("{}", fmt::join(inputs, ","))}});
}

Concurrent::Concurrent(int64_t axis) : Block("concurrent"), axis_(axis) {}

Concurrent& Concurrent::add(BlockPtr block) {
  register_child(std::move(block));
  return *this;
}

NDArray Concurrent::forward(const NDArray& x) {
  JANUS_CHECK(!children().empty(), ValueError, "{}: has no children to run", name());
  NDArray y = (*children()[0].second)(x);
  for (size_t i = 1; i < children().size(); ++i) {
    y = concat(y, (*children()[i].second)(x), axis_);
  }
  return y;
}

std::string Concurrent::describe() const { return fmt::format("Concurrent(axis={})", axis_); }

}  // namespace janus::nn
