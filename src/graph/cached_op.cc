// CachedOp: compiles a graph once (passes, memory plan, kernel set-up) and runs each call as one
// engine operation.
#include "janus/graph/cached_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "janus/base/error.h"
#include "janus/core/allocator.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/graph/passes.h"

namespace janus::graph {
namespace {

constexpr int kNoBuffer = -1;

size_t spec_bytes(const ops::TensorSpec& s) {
  return static_cast<size_t>(s.shape.numel()) * dtype_size(s.dtype);
}

size_t round_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

struct CachedOp::Impl {
  struct Step {
    const ops::OpDef* op = nullptr;
    ops::KernelFn kernel = nullptr;
    ops::Attrs attrs;
    std::string name;
    std::vector<int> in, out;  // slots
  };
  enum class SlotKind : uint8_t { kArgument, kConstant, kOutput, kIntermediate };
  struct Slot {
    SlotKind kind = SlotKind::kIntermediate;
    ops::TensorSpec spec;
    int index = -1;  // argument position, constant position or output position
    int buffer = kNoBuffer;
    int last_use = -1;
  };

  Graph source;  // the graph as given: what run_imperative runs (no fused nodes)
  Graph graph;   // after the passes
  CachedOpOptions options;
  std::vector<std::string> arg_names;
  std::vector<ops::TensorSpec> arg_specs;
  std::vector<ops::TensorSpec> out_specs;
  std::vector<NDArray> constants;
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<int> output_slots;  // per graph output
  std::vector<size_t> buffer_bytes;
  std::vector<NDArray> static_views;  // per slot (intermediates only) with static_alloc
  std::vector<int> mutated_args;
  Device device = cpu();
  MemoryPlan plan;

  void compile(const Symbol& symbol);
  void plan_memory();
  std::vector<NDArray> make_views(const std::vector<NDArray>& buffers) const;
};

void CachedOp::Impl::compile(const Symbol& symbol) {
  source = symbol.graph();
  graph = source.clone();
  const std::vector<NodePtr> args = graph.arguments();
  JANUS_CHECK(args.size() == arg_specs.size(), ValueError,
              "CachedOp: the graph has {} arguments, got specs for {}", args.size(),
              arg_specs.size());
  std::unordered_map<const Node*, int> arg_index;
  for (size_t i = 0; i < args.size(); ++i) {
    arg_names.push_back(args[i]->name);
    args[i]->specs = {arg_specs[i]};
    arg_index[args[i].get()] = static_cast<int>(i);
  }
  if (!arg_specs.empty()) device = arg_specs[0].device;
  run_passes(graph);

  // Slots: one per argument first (even when a pass dropped its node), then every other entry.
  slots.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    slots[i].kind = SlotKind::kArgument;
    slots[i].spec = arg_specs[i];
    slots[i].index = static_cast<int>(i);
  }
  std::unordered_map<const Node*, int> first_slot;
  for (const NodePtr& n : graph.nodes) {
    if (n->is_variable()) {
      if (n->constant.defined()) {
        first_slot[n.get()] = static_cast<int>(slots.size());
        Slot s;
        s.kind = SlotKind::kConstant;
        s.spec = n->specs.at(0);
        s.index = static_cast<int>(constants.size());
        constants.push_back(n->constant);
        slots.push_back(s);
      } else {
        first_slot[n.get()] = arg_index.at(n.get());
      }
      continue;
    }
    JANUS_CHECK(!n->op->copy_lane && !n->op->multi_device, NotImplementedError,
                "CachedOp: node '{}' ({}) moves data between devices; a compiled graph runs on "
                "one device",
                n->name, n->op->name);
    Step step;
    step.op = n->op;
    step.kernel = n->op->kernel_for(device.type);
    JANUS_CHECK(step.kernel != nullptr, NotImplementedError,
                "CachedOp: operator '{}' (node '{}') has no kernel for {}", n->op->name, n->name,
                device);
    step.attrs = n->attrs;
    step.name = n->name;
    for (const NodeEntry& e : n->inputs) {
      step.in.push_back(first_slot.at(e.node.get()) + static_cast<int>(e.index));
    }
    first_slot[n.get()] = static_cast<int>(slots.size());
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      step.out.push_back(static_cast<int>(slots.size()));
      Slot s;
      s.spec = n->specs.at(i);
      slots.push_back(s);
    }
    for (int m : n->op->mutable_inputs) {
      const Slot& target = slots[static_cast<size_t>(step.in[static_cast<size_t>(m)])];
      JANUS_CHECK(target.kind == SlotKind::kArgument, NotImplementedError,
                  "CachedOp: node '{}' ({}) updates its input '{}' in place, which must be an "
                  "argument of the graph",
                  n->name, n->op->name, n->op->inputs[static_cast<size_t>(m)]);
      mutated_args.push_back(target.index);
    }
    // Kernel set-up (e.g. oneDNN primitives) once, here, not per call.
    if (n->op->prepare != nullptr) {
      std::vector<ops::TensorSpec> in_specs;
      for (int s : step.in) in_specs.push_back(slots[static_cast<size_t>(s)].spec);
      ops::run_prepare(*n->op, ops::InferArgs{*n->op, in_specs, step.attrs}, n->specs);
    }
    steps.push_back(std::move(step));
  }
  for (const NodeEntry& e : graph.outputs) {
    const int s = first_slot.at(e.node.get()) + static_cast<int>(e.index);
    Slot& slot = slots[static_cast<size_t>(s)];
    if (slot.kind == SlotKind::kIntermediate) {
      slot.kind = SlotKind::kOutput;
      slot.index = static_cast<int>(output_slots.size());
    }
    output_slots.push_back(s);
    out_specs.push_back(slot.spec);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int s : steps[i].in) slots[static_cast<size_t>(s)].last_use = static_cast<int>(i);
  }
  plan_memory();
  if (options.static_alloc) {
    std::vector<NDArray> buffers;
    for (size_t bytes : buffer_bytes) {
      buffers.push_back(empty(Shape({static_cast<int64_t>(bytes)}), DType::kUInt8, device));
    }
    static_views = make_views(buffers);
  }
}

// Liveness-based reuse: walking the steps in order, each intermediate output takes the input
// buffer it may overwrite (the operator's in-place hint, when that input dies here), else the
// smallest free buffer that fits, else the largest free buffer grown to fit, else a new one;
// buffers return to the free list after the last step that reads them.
void CachedOp::Impl::plan_memory() {
  std::vector<int> free_list;
  auto release = [&](int buffer) { free_list.push_back(buffer); };
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    std::vector<int> taken;  // input buffers passed on to an output in place
    for (int o : step.out) {
      Slot& out = slots[static_cast<size_t>(o)];
      if (out.kind != SlotKind::kIntermediate) continue;
      ++plan.entries;
      const size_t bytes = round_up(spec_bytes(out.spec));
      plan.unplanned_bytes += static_cast<int64_t>(bytes);
      const int hint = step.op->inplace_input;
      if (hint >= 0 && o == step.out[0]) {
        const int i = step.in[static_cast<size_t>(hint)];
        const Slot& in = slots[static_cast<size_t>(i)];
        const bool read_once = std::count(step.in.begin(), step.in.end(), i) == 1;
        if (in.kind == SlotKind::kIntermediate && in.last_use == static_cast<int>(s) && read_once &&
            buffer_bytes[static_cast<size_t>(in.buffer)] >= bytes) {
          out.buffer = in.buffer;
          taken.push_back(in.buffer);
          ++plan.inplace;
          continue;
        }
      }
      auto best = free_list.end();
      for (auto it = free_list.begin(); it != free_list.end(); ++it) {
        const size_t have = buffer_bytes[static_cast<size_t>(*it)];
        if (have >= bytes &&
            (best == free_list.end() || have < buffer_bytes[static_cast<size_t>(*best)])) {
          best = it;
        }
      }
      if (best == free_list.end() && !free_list.empty()) {
        // None fits: grow the largest free buffer rather than add one beside it (sizes are
        // only decided here, before anything is allocated).
        best = std::max_element(free_list.begin(), free_list.end(), [&](int a, int b) {
          return buffer_bytes[static_cast<size_t>(a)] < buffer_bytes[static_cast<size_t>(b)];
        });
        buffer_bytes[static_cast<size_t>(*best)] = bytes;
      }
      if (best != free_list.end()) {
        out.buffer = *best;
        free_list.erase(best);
      } else {
        out.buffer = static_cast<int>(buffer_bytes.size());
        buffer_bytes.push_back(bytes);
      }
    }
    for (size_t k = 0; k < step.in.size(); ++k) {
      const int i = step.in[k];
      const Slot& in = slots[static_cast<size_t>(i)];
      if (in.kind != SlotKind::kIntermediate || in.last_use != static_cast<int>(s)) continue;
      if (std::find(step.in.begin(), step.in.begin() + static_cast<std::ptrdiff_t>(k), i) !=
          step.in.begin() + static_cast<std::ptrdiff_t>(k)) {
        continue;  // the same value read twice by this step: release it once
      }
      if (std::find(taken.begin(), taken.end(), in.buffer) != taken.end()) continue;
      release(in.buffer);
    }
    for (int o : step.out) {
      const Slot& out = slots[static_cast<size_t>(o)];
      if (out.kind == SlotKind::kIntermediate && out.last_use < 0) release(out.buffer);
    }
  }
  plan.buffers = static_cast<int64_t>(buffer_bytes.size());
  for (size_t b : buffer_bytes) plan.planned_bytes += static_cast<int64_t>(b);
}

std::vector<NDArray> CachedOp::Impl::make_views(const std::vector<NDArray>& buffers) const {
  std::vector<NDArray> views(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& s = slots[i];
    if (s.kind != SlotKind::kIntermediate) continue;
    const NDArray& b = buffers[static_cast<size_t>(s.buffer)];
    views[i] = NDArray(b.storage(), s.spec.shape, s.spec.dtype, 0);
  }
  return views;
}

CachedOp::CachedOp(const Symbol& symbol, std::vector<ops::TensorSpec> arg_specs,
                   CachedOpOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->options = options;
  impl_->arg_specs = std::move(arg_specs);
  impl_->compile(symbol);
}

CachedOp::~CachedOp() = default;

const Graph& CachedOp::graph() const { return impl_->graph; }
const std::vector<std::string>& CachedOp::argument_names() const { return impl_->arg_names; }
const std::vector<ops::TensorSpec>& CachedOp::output_specs() const { return impl_->out_specs; }
const MemoryPlan& CachedOp::memory_plan() const { return impl_->plan; }

namespace {

void check_args(const std::vector<std::string>& names, const std::vector<ops::TensorSpec>& specs,
                std::span<const NDArray> args) {
  JANUS_CHECK(args.size() == specs.size(), ValueError,
              "CachedOp: got {} arguments, expected {} ({})", args.size(), specs.size(),
              fmt::join(names, ", "));
  for (size_t i = 0; i < args.size(); ++i) {
    JANUS_CHECK(args[i].defined(), ValueError, "CachedOp: argument '{}' is undefined", names[i]);
    JANUS_CHECK(args[i].shape() == specs[i].shape, ShapeError,
                "CachedOp: argument '{}' has shape {}, the graph was compiled for {}", names[i],
                args[i].shape(), specs[i].shape);
    JANUS_CHECK(args[i].dtype() == specs[i].dtype, TypeError,
                "CachedOp: argument '{}' has dtype {}, the graph was compiled for {}", names[i],
                dtype_name(args[i].dtype()), dtype_name(specs[i].dtype));
    JANUS_CHECK(args[i].device() == specs[i].device, DeviceError,
                "CachedOp: argument '{}' is on {}, the graph was compiled for {}", names[i],
                args[i].device(), specs[i].device);
  }
}

}  // namespace

std::vector<NDArray> CachedOp::operator()(std::span<const NDArray> args) const {
  const Impl& im = *impl_;
  check_args(im.arg_names, im.arg_specs, args);
  // Arguments, constants and outputs are bound now. Intermediates live only inside the one
  // engine operation: with static_alloc in buffers allocated once; otherwise in scratch
  // storages made here without memory (and without an engine var: nothing outside the
  // operation sees them), whose blocks the operation takes from the allocator when it starts
  // and returns when it ends. Allocated at the push instead, a backward graph's buffers would
  // be held through the whole forward before it, since the frontend runs ahead.
  std::vector<std::shared_ptr<Storage>> scratch;
  std::vector<NDArray> values;
  if (im.options.static_alloc) {
    values = im.static_views;
  } else {
    std::vector<NDArray> buffers;
    for (size_t bytes : im.buffer_bytes) {
      scratch.push_back(std::make_shared<Storage>(Storage{Block{}, im.device, nullptr}));
      buffers.emplace_back(scratch.back(), Shape({static_cast<int64_t>(bytes)}), DType::kUInt8);
    }
    values = im.make_views(buffers);
  }
  std::vector<Var*> reads, writes;
  for (size_t i = 0; i < im.slots.size(); ++i) {
    const Impl::Slot& s = im.slots[i];
    switch (s.kind) {
      case Impl::SlotKind::kArgument:
        values[i] = args[static_cast<size_t>(s.index)];
        reads.push_back(values[i].var());
        break;
      case Impl::SlotKind::kConstant:
        values[i] = im.constants[static_cast<size_t>(s.index)];
        reads.push_back(values[i].var());
        break;
      case Impl::SlotKind::kOutput:
        values[i] = empty(s.spec.shape, s.spec.dtype, im.device);
        writes.push_back(values[i].var());
        break;
      case Impl::SlotKind::kIntermediate:
        if (im.options.static_alloc) writes.push_back(values[i].var());
        break;
    }
  }
  for (int a : im.mutated_args) writes.push_back(args[static_cast<size_t>(a)].var());
  std::vector<ops::RngKey> keys;  // drawn now, in program order, for determinism
  for (const Impl::Step& step : im.steps) {
    keys.push_back(step.op->random ? ops::next_rng_key() : ops::RngKey{});
  }
  std::vector<NDArray> outputs;
  for (int s : im.output_slots) outputs.push_back(values[static_cast<size_t>(s)]);
  // Each step's inputs then outputs, contiguous, so kernels see spans.
  std::vector<NDArray> flat;
  for (const Impl::Step& step : im.steps) {
    for (int s : step.in) flat.push_back(values[static_cast<size_t>(s)]);
    for (int s : step.out) flat.push_back(values[static_cast<size_t>(s)]);
  }
  OpDetail detail;
  if (op_listener_installed()) detail = ops::describe_call(args, outputs);
  engine().push(
      [impl = impl_, flat = std::move(flat), keys = std::move(keys),
       scratch = std::move(scratch)](const RunContext& ctx) {
        // This run's scratch memory, straight from the device's allocator, returned at the end
        // (also when a step throws).
        struct Scratch {
          const std::vector<std::shared_ptr<Storage>>& storages;
          ~Scratch() {
            for (const auto& st : storages) {
              if (st->block.ptr != nullptr) allocator_for(st->device).free(st->block);
              st->block = Block{};
            }
          }
        } release{scratch};
        for (size_t b = 0; b < scratch.size(); ++b) {
          scratch[b]->block = allocator_for(impl->device).allocate(impl->buffer_bytes[b]);
        }
        std::span<const NDArray> all(flat);
        size_t at = 0;
        for (size_t i = 0; i < impl->steps.size(); ++i) {
          const Impl::Step& step = impl->steps[i];
          const size_t n_in = step.in.size(), n_out = step.out.size();
          try {
            const std::span<const NDArray> in = all.subspan(at, n_in);
            const std::span<const NDArray> out = all.subspan(at + n_in, n_out);
            if (op_listener_installed()) {
              // Profiled: each step becomes an event of its own, inside the cached_op event.
              const int64_t start = op_clock_ns();
              step.kernel(ops::KernelArgs{in, out, step.attrs, ctx, keys[i]});
              report_operation(step.op->name, ops::describe_call(in, out), ctx.device, ctx.lane,
                               start, op_clock_ns());
            } else {
              step.kernel(ops::KernelArgs{in, out, step.attrs, ctx, keys[i]});
            }
          } catch (Error& e) {
            e.add_context(fmt::format("graph node '{}' ({})", step.name, step.op->name));
            throw;
          }
          at += n_in + n_out;
        }
      },
      reads, writes, im.device, Lane::kCompute, 0, "cached_op", std::move(detail));
  return outputs;
}

std::vector<NDArray> CachedOp::run_imperative(std::span<const NDArray> args) const {
  const Impl& im = *impl_;
  check_args(im.arg_names, im.arg_specs, args);
  // The source graph, node by node through invoke: autograd records each call (fused nodes
  // have no gradient, so the passes' output is not what runs here).
  std::unordered_map<const Node*, std::vector<NDArray>> values;
  size_t next_arg = 0;
  for (const NodePtr& n : im.source.nodes) {
    if (n->is_variable()) {
      values[n.get()] = {n->constant.defined() ? n->constant : args[next_arg++]};
      continue;
    }
    std::vector<NDArray> ins;
    for (const NodeEntry& e : n->inputs) ins.push_back(values.at(e.node.get()).at(e.index));
    values[n.get()] = ops::invoke(*n->op, ins, n->attrs);
  }
  std::vector<NDArray> outputs;
  for (const NodeEntry& e : im.source.outputs)
    outputs.push_back(values.at(e.node.get()).at(e.index));
  return outputs;
}

}  // namespace janus::graph
