// Hybridization of blocks: trace forward once per input signature, cache the compiled graph,
// run it; export it with the parameters.
#include <fmt/format.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/base/logging.h"
#include "janus/engine/array.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/trace.h"
#include "janus/nn/block.h"
#include "hybrid_state.h"
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
    h.reason = h.cache.empty()
                   ? fmt::format("first call ({})", sig.to_string())
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
      auto oldest = std::min_element(h.cache.begin(), h.cache.end(), [](auto& a, auto& b) {
        return a.last_used < b.last_used;
      });
      h.cache.erase(oldest);
    }
    h.cache.push_back({sig, std::move(sym), std::move(op), std::move(arg_params), 0});
    hit = &h.cache.back();
  }
  hit->last_used = ++h.clock;
  h.last = hit;
  std::vector<NDArray> args;
  args.reserve(hit->params.size());
  for (const ParameterPtr& p : hit->params) args.push_back(p ? p->data() : x);
  // Recording: run node by node so that autograd records each call (the gradients flow to the
  // parameters as in imperative mode). Otherwise: one engine operation for the whole graph.
  std::vector<NDArray> out = autograd::is_recording() ? hit->op->run_imperative(args)
                                                      : (*hit->op)(args);
  return out.at(0);
}

void Block::export_model(const std::string& prefix, int epoch) const {
  const graph::Symbol sym = symbol();
  JANUS_CHECK(epoch >= 0 && epoch <= 9999, ValueError,
              "{}: export: epoch {} must be in [0, 9999]", name_, epoch);
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
