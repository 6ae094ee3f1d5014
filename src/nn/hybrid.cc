// Hybridization of blocks: trace forward once per input signature, cache the compiled graph,
// run it; export it with the parameters.
#include <fmt/format.h>

#include "hybrid_state.h"
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

namespace janus::nn {

Block::~Block() = default;

void Block::hybridize(bool active, const HybridizeOptions& options) {
  JANUS_CHECK(options.cache_size > 0, ValueError, "{}: hybridize: cache_size must be at least 1",
              name_);
  if (!hybrid_) hybrid_ = std::make_unique<HybridState>();
  const bool changed = hybrid_->options.static_alloc != options.static_alloc ||
                       hybrid_->options.static_shape != options.static_shape;
  hybrid_->active = active;
  hybrid_->options = options;
  if (changed || !active) {
    hybrid_->cache.clear();
    hybrid_->last = nullptr;
  }
  for (auto& [local, child] : children_) child->hybridize(active, options);
}

bool Block::is_hybridized() const { return hybrid_ && hybrid_->active; }
int64_t Block::trace_count() const { return hybrid_ ? hybrid_->traces : 0; }
std::string Block::last_trace_reason() const { return hybrid_ ? hybrid_->reason : ""; }

graph::Symbol Block::symbol() const {
  JANUS_CHECK(hybrid_ && hybrid_->last != nullptr, ValueError,
              "{}: no graph yet: call hybridize() and then the block once", name_);
  return hybrid_->last->symbol;
}

namespace {

// The training graphs of a signature: differentiated with respect to the parameters that take
// gradients (and the input when it needs one), each compiled.
std::shared_ptr<TrainPlan> make_train_plan(const HybridState::Entry& entry, bool data_grad,
                                           const graph::CachedOpOptions& options) {
  auto plan = std::make_shared<TrainPlan>();
  const std::vector<std::string>& names = entry.op->argument_names();
  std::vector<ops::TensorSpec> specs;
  for (size_t i = 0; i < names.size(); ++i) {
    const ParameterPtr& p = entry.params[i];
    const bool wanted = p ? p->grad_req() != autograd::GradReq::kNull : data_grad;
    if (wanted) {
      plan->wrt.push_back(names[i]);
      plan->wrt_index.push_back(i);
    }
  }
  // The entry's compiled op checked these specs; rebuild them from its graph's arguments.
  for (const graph::NodePtr& n : entry.symbol.graph().arguments()) specs.push_back(n->specs.at(0));
  const graph::GradientGraphs gg = graph::make_gradient_graphs(entry.symbol, specs, plan->wrt);
  auto position = [&](const std::string& name) -> int64_t {
    auto it = std::find(names.begin(), names.end(), name);
    JANUS_ASSERT(it != names.end(), "gradient graph argument '{}' is not an argument", name);
    return it - names.begin();
  };
  std::vector<ops::TensorSpec> fspecs;
  for (const std::string& name : gg.forward.list_arguments()) {
    plan->forward_args.push_back(position(name));
    fspecs.push_back(specs[static_cast<size_t>(plan->forward_args.back())]);
  }
  plan->forward = std::make_shared<graph::CachedOp>(gg.forward, std::move(fspecs), options);
  std::vector<ops::TensorSpec> bspecs;
  for (const std::string& name : gg.backward.list_arguments()) {
    if (name.starts_with("_head_grad")) {
      plan->backward_args.push_back(TrainPlan::kHeadGrad);
      bspecs.push_back(plan->forward->output_specs()[0]);
    } else if (name.starts_with("_saved")) {
      const int64_t k = std::stoll(name.substr(6));
      plan->backward_args.push_back(-1 - k);
      bspecs.push_back(plan->forward->output_specs()[gg.num_outputs + static_cast<size_t>(k)]);
    } else {
      plan->backward_args.push_back(position(name));
      bspecs.push_back(specs[static_cast<size_t>(plan->backward_args.back())]);
    }
  }
  plan->backward = std::make_shared<graph::CachedOp>(gg.backward, std::move(bspecs), options);
  return plan;
}

}  // namespace

NDArray Block::operator()(const NDArray& x) {
  // Imperative, or inside the trace of an enclosing hybridized block (which records this
  // block's operators into its own graph).
  if (!is_hybridized() || graph::is_tracing()) return forward(x);
  HybridState& h = *hybrid_;
  const Signature sig{x.shape(), x.dtype(), x.device(), autograd::is_training()};
  HybridState::Entry* hit = nullptr;
  for (auto& e : h.cache) {
    if (e.sig == sig) hit = &e;
  }
  if (hit == nullptr) {
    if (h.options.static_shape && !h.cache.empty()) {
      JANUS_CHECK(h.cache.front().sig.shape == sig.shape, ShapeError,
                  "{}: hybridized with static_shape for input shape {}, got {}", name_,
                  h.cache.front().sig.shape, sig.shape);
    }
    h.reason = h.cache.empty() ? fmt::format("first call ({})", sig.to_string())
                               : fmt::format("new input signature {} (cached: {})", sig.to_string(),
                                             h.last != nullptr ? h.last->sig.to_string() : "none");
    const ParameterDict params = collect_params();
    graph::Tracer tracer([&params](const NDArray& a) -> std::optional<std::string> {
      for (const auto& [name, p] : params) {
        if (p->initialized() && p->data().storage() == a.storage()) return name;
      }
      return std::nullopt;
    });
    NDArray ph = tracer.input("data", {x.shape(), x.dtype(), x.device()});
    NDArray y;
    {
      graph::TraceScope scope(tracer);
      y = forward(ph);
    }
    graph::Symbol sym = tracer.finish({&y, 1});
    std::vector<ops::TensorSpec> specs;
    std::vector<ParameterPtr> arg_params;
    for (const std::string& name : sym.list_arguments()) {
      arg_params.push_back(name == "data" ? nullptr : params.at(name));
      const NDArray a = name == "data" ? x : params.at(name)->data();
      specs.push_back({a.shape(), a.dtype(), a.device()});
    }
    auto op = std::make_shared<graph::CachedOp>(
        sym, std::move(specs),
        graph::CachedOpOptions{h.options.static_alloc, h.options.static_shape});
    ++h.traces;
    JANUS_LOG(kInfo, "hybridize: {} traced (trace {}): {}; {} operators", name_, h.traces, h.reason,
              tracer.recorded());
    if (h.cache.size() >= h.options.cache_size) {
      auto oldest = std::min_element(h.cache.begin(), h.cache.end(),
                                     [](auto& a, auto& b) { return a.last_used < b.last_used; });
      h.cache.erase(oldest);
    }
    h.cache.push_back({sig, std::move(sym), std::move(op), std::move(arg_params), 0});
    hit = &h.cache.back();
  }
  hit->last_used = ++h.clock;
  h.last = hit;
  std::vector<NDArray> args;
  args.reserve(hit->params.size());
  bool any_grad = false;
  for (const ParameterPtr& p : hit->params) {
    args.push_back(p ? p->data() : x);
    any_grad = any_grad || autograd::requires_grad(args.back());
  }
  if (!autograd::is_recording() || !any_grad) return (*hit->op)(args).at(0);
  // Recording: the forward graph also returns what backward needs, and backward is one
  // compiled graph too, recorded as one autograd node.
  const bool data_grad = autograd::requires_grad(x);
  auto& plan = hit->train[data_grad ? 1 : 0];
  if (!plan) {
    plan = make_train_plan(*hit, data_grad, {h.options.static_alloc, h.options.static_shape});
  }
  std::vector<NDArray> fargs;
  for (int64_t a : plan->forward_args) fargs.push_back(args[static_cast<size_t>(a)]);
  std::vector<NDArray> outs = (*plan->forward)(fargs);
  const NDArray y = outs[0];
  // Detached: a saved value may be y itself (relu's gradient reads its output), and y gets this
  // node's autograd history: captured as is, the node would hold itself alive.
  std::vector<NDArray> saved;
  for (auto it = outs.begin() + 1; it != outs.end(); ++it) saved.push_back(it->detach());
  autograd::record_function(fmt::format("hybridized {}", name_), args, {&y, 1},
                            // The tape hands back the arguments (detached) as ga.inputs.
                            [plan, saved = std::move(saved)](const ops::GradArgs& ga) {
                              std::vector<NDArray> bargs;
                              for (int64_t a : plan->backward_args) {
                                bargs.push_back(a == TrainPlan::kHeadGrad ? ga.dy(0)
                                                : a >= 0 ? ga.x(static_cast<size_t>(a))
                                                         : saved[static_cast<size_t>(-1 - a)]);
                              }
                              std::vector<NDArray> grads = (*plan->backward)(bargs);
                              std::vector<NDArray> out(ga.inputs.size());
                              for (size_t j = 0; j < plan->wrt_index.size(); ++j)
                                out[plan->wrt_index[j]] = grads[j];
                              return out;
                            });
  return y;
}

void Block::export_model(const std::string& prefix, int epoch) const {
  const graph::Symbol sym = symbol();
  JANUS_CHECK(epoch >= 0 && epoch <= 9999, ValueError, "{}: export: epoch {} must be in [0, 9999]",
              name_, epoch);
  const ParameterDict params = collect_params();
  graph::NamedArrays arrays;
  for (const graph::NodePtr& n : sym.graph().nodes) {
    if (!n->is_variable()) continue;
    if (n->constant.defined()) {
      arrays.emplace_back(n->name, n->constant);
    } else if (n->name != "data") {
      arrays.emplace_back(n->name, params.at(n->name)->data());
    }
  }
  sym.save(prefix + "-symbol.json");
  graph::save_safetensors(fmt::format("{}-{:04d}.safetensors", prefix, epoch), arrays,
                          {{"format", "janus.params"}, {"inputs", "data"}});
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
