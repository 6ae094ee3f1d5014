// CachedOp: compiles a graph once (passes, memory plan, kernel set-up) and runs each call as one
// engine operation.
#include "janus/graph/cached_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "janus/base/error.h"
#include "janus/core/allocator.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/graph/passes.h"

#include "cached_op_impl.h"

namespace janus::graph {

void CachedOp::Impl::compile(const Symbol& symbol) {
  source = symbol.graph();
  graph = source.clone();
  const std::vector<NodePtr> args = graph.arguments();
  JANUS_CHECK(args.size() == arg_specs.size(), ValueError,
              "CachedOp: the graph has {} arguments, got specs for {}", args.size(),
              arg_specs.size());
  std::unordered_map<const Node*, int> first_slot = add_argument_slots(args);
  if (!arg_specs.empty()) device = arg_specs[0].device;
  run_passes(graph);
  for (const NodePtr& n : graph.nodes) {
    if (!n->is_variable()) {
      add_step(*n, first_slot);
    } else if (n->constant.defined()) {
      add_constant_slot(*n, first_slot);
    }
  }
  add_outputs(first_slot);
  bind_argument_views();
  bind_output_views();
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int s : steps[i].in) slots[static_cast<size_t>(s)].last_use = static_cast<int>(i);
    flat_slots.insert(flat_slots.end(), steps[i].in.begin(), steps[i].in.end());
    flat_slots.insert(flat_slots.end(), steps[i].out.begin(), steps[i].out.end());
    any_random = any_random || steps[i].op->random;
  }
  plan_memory();
  for (size_t bytes : buffer_bytes) {
    buffer_offsets.push_back(block_bytes);
    block_bytes += round_up(bytes);
  }
  any_intermediate = std::any_of(slots.begin(), slots.end(),
                                 [](const Slot& s) { return s.kind == SlotKind::kIntermediate; });
  if (options.static_alloc && any_intermediate) {
    // Intermediates of zero elements only need no memory: their views sit on a storage that
    // stays empty.
    static_block =
        block_bytes > 0
            ? empty(Shape({static_cast<int64_t>(block_bytes)}), DType::kUInt8, device).storage()
            : nullptr;
    static_views = make_views(static_block != nullptr
                                  ? static_block
                                  : std::make_shared<Storage>(Storage{Block{}, device, nullptr}));
  }
}

// One slot per argument first, in argument order (even when a pass drops its node).
std::unordered_map<const Node*, int> CachedOp::Impl::add_argument_slots(
    const std::vector<NodePtr>& args) {
  std::unordered_map<const Node*, int> first_slot;
  slots.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    arg_names.push_back(args[i]->name);
    args[i]->specs = {arg_specs[i]};
    first_slot[args[i].get()] = static_cast<int>(i);
    slots[i].kind = SlotKind::kArgument;
    slots[i].spec = arg_specs[i];
    slots[i].index = static_cast<int>(i);
  }
  return first_slot;
}

void CachedOp::Impl::add_constant_slot(const Node& n,
                                       std::unordered_map<const Node*, int>& first_slot) {
  first_slot[&n] = static_cast<int>(slots.size());
  Slot s;
  s.kind = SlotKind::kConstant;
  s.spec = n.specs.at(0);
  s.index = static_cast<int>(constants.size());
  constants.push_back(n.constant);
  slots.push_back(s);
}

// The step of an operator node: its kernel for the device, its input slots and a new slot per
// output; the kernel's set-up (e.g. oneDNN primitives) runs once, here, not per call.
void CachedOp::Impl::add_step(const Node& n, std::unordered_map<const Node*, int>& first_slot) {
  JANUS_CHECK(!n.op->copy_lane && !n.op->multi_device, NotImplementedError,
              "CachedOp: node '{}' ({}) moves data between devices; a compiled graph runs on "
              "one device",
              n.name, n.op->name);
  Step step;
  step.op = n.op;
  step.kernel = n.op->kernel_for(device.type);
  JANUS_CHECK(step.kernel != nullptr, NotImplementedError,
              "CachedOp: operator '{}' (node '{}') has no kernel for {}", n.op->name, n.name,
              device);
  step.attrs = n.attrs;
  step.name = n.name;
  for (const NodeEntry& e : n.inputs) {
    step.in.push_back(first_slot.at(e.node.get()) + static_cast<int>(e.index));
  }
  first_slot[&n] = static_cast<int>(slots.size());
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    step.out.push_back(static_cast<int>(slots.size()));
    Slot s;
    s.spec = n.specs.at(i);
    slots.push_back(s);
  }
  for (int m : n.op->mutable_inputs) {
    const Slot& target = slots[static_cast<size_t>(step.in[static_cast<size_t>(m)])];
    JANUS_CHECK(target.kind == SlotKind::kArgument, NotImplementedError,
                "CachedOp: node '{}' ({}) updates its input '{}' in place, which must be an "
                "argument of the graph",
                n.name, n.op->name, n.op->inputs[static_cast<size_t>(m)]);
    mutated_args.push_back(target.index);
  }
  if (n.op->prepare != nullptr) {
    std::vector<ops::TensorSpec> in_specs;
    for (int s : step.in) in_specs.push_back(slots[static_cast<size_t>(s)].spec);
    ops::run_prepare(*n.op, ops::InferArgs{*n.op, in_specs, step.attrs}, n.specs);
  }
  steps.push_back(std::move(step));
}

// The graph's outputs: an intermediate slot that is one becomes an output slot (allocated per
// call, never planned).
void CachedOp::Impl::add_outputs(const std::unordered_map<const Node*, int>& first_slot) {
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
}

// A view step (OpDef::view_of) of an argument, or of a view of one: its value becomes a view of
// the argument made at the call, and the step goes. Run as a step, it copied the whole argument
// (a dense layer's flattened input: 800 KB per call at batch 256, in the training forward graph
// an output too, saved for the weight's gradient), since the memory planner gives a value the
// buffer of an intermediate input only. A graph output that is such a view shares the
// argument's storage, as the imperative call's result does.
void CachedOp::Impl::bind_argument_views() {
  std::vector<Step> kept;
  for (Step& step : steps) {
    if (step.op->view_of >= 0 && step.out.size() == 1) {
      const Slot& in = slots[static_cast<size_t>(step.in[static_cast<size_t>(step.op->view_of)])];
      Slot& out = slots[static_cast<size_t>(step.out[0])];
      if ((in.kind == SlotKind::kArgument || in.kind == SlotKind::kArgumentView) &&
          (out.kind == SlotKind::kIntermediate || out.kind == SlotKind::kOutput)) {
        out.kind = SlotKind::kArgumentView;
        out.index = in.index;
        ++plan.argument_views;
        continue;
      }
    }
    kept.push_back(std::move(step));
  }
  steps = std::move(kept);
}

// A view step whose value is a graph output and whose input a step computes: run as a step, it
// copied that input (LeNet's flattened pooling output, saved for the first dense layer's weight
// gradient). The input becomes an output (allocated per call, never planned; hidden when the
// graph does not return it) and the view is made of it at the call. Views of such views follow,
// as the steps come in order.
void CachedOp::Impl::bind_output_views() {
  std::vector<Step> kept;
  for (Step& step : steps) {
    if (step.op->view_of >= 0 && step.out.size() == 1) {
      const int src = step.in[static_cast<size_t>(step.op->view_of)];
      Slot& in = slots[static_cast<size_t>(src)];
      Slot& out = slots[static_cast<size_t>(step.out[0])];
      if (out.kind == SlotKind::kOutput &&
          (in.kind == SlotKind::kIntermediate || in.kind == SlotKind::kOutput ||
           in.kind == SlotKind::kOutputView)) {
        if (in.kind == SlotKind::kIntermediate) {
          in.kind = SlotKind::kOutput;
          in.index = static_cast<int>(output_slots.size()) + hidden_outputs++;
        }
        // A view of a view is a view of what that one views.
        out.kind = SlotKind::kOutputView;
        out.index = in.kind == SlotKind::kOutputView ? in.index : src;
        ++plan.output_views;
        continue;
      }
    }
    kept.push_back(std::move(step));
  }
  steps = std::move(kept);
}

std::vector<NDArray> CachedOp::Impl::make_views(const std::shared_ptr<Storage>& block) const {
  std::vector<NDArray> views(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& s = slots[i];
    if (s.kind != SlotKind::kIntermediate) continue;
    views[i] =
        NDArray(block, s.spec.shape, s.spec.dtype, buffer_offsets[static_cast<size_t>(s.buffer)]);
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

// The arrays a call writes its outputs into (CachedOp::operator()'s `outs`): one per output
// or none; each of its output's spec, and sharing no storage with an argument (the kernels
// would read what they write) or with another destination.
void check_outs(const std::vector<ops::TensorSpec>& specs, std::span<const NDArray> args,
                std::span<const NDArray> outs) {
  if (outs.empty()) return;
  JANUS_CHECK(outs.size() == specs.size(), ValueError,
              "CachedOp: got {} output arrays, expected none or one per output ({})", outs.size(),
              specs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const NDArray& o = outs[i];
    if (!o.defined()) continue;
    JANUS_CHECK(o.shape() == specs[i].shape, ShapeError,
                "CachedOp: output array {} has shape {}, output {} has shape {}", i, o.shape(), i,
                specs[i].shape);
    JANUS_CHECK(o.dtype() == specs[i].dtype, TypeError,
                "CachedOp: output array {} has dtype {}, output {} has dtype {}", i,
                dtype_name(o.dtype()), i, dtype_name(specs[i].dtype));
    JANUS_CHECK(o.device() == specs[i].device, DeviceError,
                "CachedOp: output array {} is on {}, output {} is on {}", i, o.device(), i,
                specs[i].device);
    for (size_t a = 0; a < args.size(); ++a) {
      JANUS_CHECK(args[a].storage() != o.storage(), ValueError,
                  "CachedOp: output array {} shares its storage with argument {}; the graph "
                  "would overwrite what it reads",
                  i, a);
    }
    for (size_t j = 0; j < i; ++j) {
      JANUS_CHECK(!outs[j].defined() || outs[j].storage() != o.storage(), ValueError,
                  "CachedOp: output arrays {} and {} share their storage", j, i);
    }
  }
}

}  // namespace

// Binds arguments, constants and (new) outputs now; intermediates live only inside the one
// engine operation, in the static buffers or in scratch storages. The operation's flat list of
// values is built straight from the slots (flat_slots), without a per-slot copy first.
CachedOp::Impl::BoundCall CachedOp::Impl::bind_call(std::span<const NDArray> args,
                                                    std::span<const NDArray> outs) const {
  const Impl& im = *this;
  BoundCall call;
  std::vector<NDArray> scratch_views;
  if (!im.options.static_alloc && im.any_intermediate) {
    call.scratch = std::make_shared<Storage>(Storage{Block{}, im.device, nullptr});
    scratch_views = im.make_views(call.scratch);
  }
  const std::vector<NDArray>& intermediates =
      im.options.static_alloc ? im.static_views : scratch_views;
  // By a kOutput slot's index (hidden outputs last).
  std::vector<NDArray> new_outputs(im.output_slots.size() + static_cast<size_t>(im.hidden_outputs));
  call.reads.reserve(im.arg_specs.size() + im.constants.size());
  for (size_t i = 0; i < im.slots.size(); ++i) {
    const Slot& s = im.slots[i];
    switch (s.kind) {
      case SlotKind::kArgument:
        call.reads.push_back(args[static_cast<size_t>(s.index)].var());
        break;
      case SlotKind::kConstant:
        call.reads.push_back(im.constants[static_cast<size_t>(s.index)].var());
        break;
      case SlotKind::kOutput: {
        NDArray& v = new_outputs[static_cast<size_t>(s.index)];
        const bool given = static_cast<size_t>(s.index) < outs.size() &&
                           outs[static_cast<size_t>(s.index)].defined();
        v = given ? outs[static_cast<size_t>(s.index)]
                  : empty(s.spec.shape, s.spec.dtype, im.device);
        call.writes.push_back(v.var());
        break;
      }
      case SlotKind::kIntermediate:  // the static block's one var, written below
        break;
      case SlotKind::kArgumentView:  // reads its argument's var, which is read already
      case SlotKind::kOutputView:    // writes its output's var, which is written already
        break;
    }
  }
  std::vector<NDArray> views(im.slots.size());  // kArgumentView and kOutputView slots
  for (size_t i = 0; i < im.slots.size(); ++i) {
    const Slot& s = im.slots[i];
    if (s.kind == SlotKind::kArgumentView) {
      views[i] = args[static_cast<size_t>(s.index)].reshape(s.spec.shape);
    } else if (s.kind == SlotKind::kOutputView) {
      const Slot& viewed = im.slots[static_cast<size_t>(s.index)];
      views[i] = new_outputs[static_cast<size_t>(viewed.index)].reshape(s.spec.shape);
    }
  }
  // Consecutive calls share the static block: each call writes it.
  if (im.static_block) call.writes.push_back(im.static_block->var);
  for (int a : im.mutated_args) call.writes.push_back(args[static_cast<size_t>(a)].var());
  auto value = [&](int slot) -> const NDArray& {
    const Slot& s = im.slots[static_cast<size_t>(slot)];
    switch (s.kind) {
      case SlotKind::kArgument:
        return args[static_cast<size_t>(s.index)];
      case SlotKind::kConstant:
        return im.constants[static_cast<size_t>(s.index)];
      case SlotKind::kOutput:
        return new_outputs[static_cast<size_t>(s.index)];
      case SlotKind::kArgumentView:
      case SlotKind::kOutputView:
        return views[static_cast<size_t>(slot)];
      case SlotKind::kIntermediate:
        break;
    }
    return intermediates[static_cast<size_t>(slot)];
  };
  call.flat.reserve(im.flat_slots.size());
  for (int s : im.flat_slots) call.flat.push_back(value(s));
  call.outputs.reserve(im.output_slots.size());
  for (int s : im.output_slots) call.outputs.push_back(value(s));
  return call;
}

// A list for calls on `args`: each value bound by a handle of the list's own (see KeptCall),
// the outputs in new storage.
std::shared_ptr<CachedOp::Impl::KeptCall> CachedOp::Impl::make_kept(
    std::span<const NDArray> args) const {
  const Impl& im = *this;
  auto k = std::make_shared<KeptCall>();
  k->values.resize(im.slots.size());
  k->output_refs.resize(im.output_slots.size() + static_cast<size_t>(im.hidden_outputs));
  for (const NDArray& a : args) {
    k->arg_storages.push_back(a.storage().get());
    k->arg_offsets.push_back(a.offset_bytes());
    k->reads.push_back(a.var());
  }
  for (const NDArray& c : im.constants) k->reads.push_back(c.var());
  for (size_t i = 0; i < im.slots.size(); ++i) {  // views come after what they view
    const Slot& s = im.slots[i];
    NDArray& v = k->values[i];
    const auto index = static_cast<size_t>(s.index);
    switch (s.kind) {
      case SlotKind::kArgument:
        v = args[index].detach();
        break;
      case SlotKind::kConstant:
        v = im.constants[index].detach();
        break;
      case SlotKind::kOutput:
        v = empty(s.spec.shape, s.spec.dtype, im.device);
        k->writes.push_back(v.var());
        break;
      case SlotKind::kIntermediate:
        v = im.static_views[i].detach();
        break;
      case SlotKind::kArgumentView:
        v = args[index].reshape(s.spec.shape);
        break;
      case SlotKind::kOutputView:
        v = k->values[index].reshape(s.spec.shape);
        break;
    }
  }
  if (im.static_block) k->writes.push_back(im.static_block->var);
  for (int a : im.mutated_args) k->writes.push_back(args[static_cast<size_t>(a)].var());
  k->flat.reserve(im.flat_slots.size());
  for (int s : im.flat_slots) k->flat.push_back(k->values[static_cast<size_t>(s)]);
  for (size_t i = 0; i < im.slots.size(); ++i) {
    if (im.slots[i].kind == SlotKind::kOutput) {
      k->output_refs[static_cast<size_t>(im.slots[i].index)] = k->values[i].storage().use_count();
    }
  }
  return k;
}

// Whether `args` are the arrays of the call before (remembered by weak references, which keep
// the storages' control blocks: an address cannot come back as another storage); remembers them.
bool CachedOp::Impl::repeats_last_call(std::span<const NDArray> args) const {
  bool repeated = last_arg_storages.size() == args.size();
  last_arg_storages.resize(args.size());
  last_arg_offsets.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const std::shared_ptr<Storage>& s = args[i].storage();
    std::weak_ptr<Storage>& last = last_arg_storages[i];
    if (!last.owner_before(s) && !s.owner_before(last) &&
        last_arg_offsets[i] == args[i].offset_bytes()) {
      continue;  // assigned only when it changed: the storage's line stays clean
    }
    repeated = false;
    last = s;
    last_arg_offsets[i] = args[i].offset_bytes();
  }
  return repeated;
}

std::optional<CachedOp::Impl::KeptTake> CachedOp::Impl::take_kept(
    std::span<const NDArray> args) const {
  const Impl& im = *this;
  std::lock_guard<std::mutex> lock(kept_mutex);
  auto same_as_kept = [&] {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].storage().get() != kept->arg_storages[i] ||
          args[i].offset_bytes() != kept->arg_offsets[i]) {
        return false;
      }
    }
    return true;
  };
  if (kept && !same_as_kept()) kept.reset();  // its arguments' memory is not held longer
  if (!kept && !repeats_last_call(args)) return std::nullopt;
  auto outputs_held = [&] {
    for (size_t i = 0; i < im.slots.size(); ++i) {
      const Slot& s = im.slots[i];
      if (s.kind == SlotKind::kOutput && kept->values[i].storage().use_count() !=
                                             kept->output_refs[static_cast<size_t>(s.index)]) {
        return true;
      }
    }
    return false;
  };
  // A caller that still holds an earlier output (or a view of it) keeps the list's storage:
  // the call then takes a new list, with new outputs.
  if (!kept || outputs_held()) {
    kept = make_kept(args);
  } else {
    // The caller's last handle went on another thread: what was done with the storage before
    // happens before this call writes it.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  KeptTake take{kept, {}};
  take.outputs.reserve(im.output_slots.size());
  for (int s : im.output_slots) {
    const Slot& slot = im.slots[static_cast<size_t>(s)];
    const auto index = static_cast<size_t>(slot.index);
    switch (slot.kind) {
      case SlotKind::kArgument:
        take.outputs.push_back(args[index]);
        break;
      case SlotKind::kConstant:
        take.outputs.push_back(im.constants[index]);
        break;
      case SlotKind::kArgumentView:
        take.outputs.push_back(args[index].reshape(slot.spec.shape));
        break;
      case SlotKind::kOutput:  // a new array object on the list's storage
      case SlotKind::kOutputView:
      case SlotKind::kIntermediate:  // never a graph output (add_outputs)
        take.outputs.push_back(kept->values[static_cast<size_t>(s)].detach());
        break;
    }
  }
  return take;
}

// The body of a call's engine operation: each step's kernel on its slice of `flat` (its inputs
// then its outputs), with this run's scratch memory taken from the device's allocator and
// returned at the end (also when a step throws).
void CachedOp::Impl::run_steps(std::span<const NDArray> flat, std::span<const ops::RngKey> keys,
                               const std::shared_ptr<Storage>& scratch,
                               const RunContext& ctx) const {
  const Impl& im = *this;
  struct Scratch {
    Storage* storage;
    ~Scratch() {
      if (storage == nullptr || storage->block.ptr == nullptr) return;
      allocator_for(storage->device).free(storage->block);
      storage->block = Block{};
    }
  } release{scratch.get()};
  if (scratch && im.block_bytes > 0)
    scratch->block = allocator_for(im.device).allocate(im.block_bytes);
  size_t at = 0;
  for (size_t i = 0; i < im.steps.size(); ++i) {
    const Step& step = im.steps[i];
    const size_t n_in = step.in.size(), n_out = step.out.size();
    try {
      const std::span<const NDArray> in = flat.subspan(at, n_in);
      const std::span<const NDArray> out = flat.subspan(at + n_in, n_out);
      const ops::RngKey key = keys.empty() ? ops::RngKey{} : keys[i];  // empty: nothing random
      if (op_listener_installed()) {
        // Profiled: each step becomes an event of its own, inside the cached_op event.
        const int64_t start = op_clock_ns();
        step.kernel(ops::KernelArgs{in, out, step.attrs, ctx, key});
        report_operation(step.op->name, ops::describe_call(in, out), ctx.device, ctx.lane, start,
                         op_clock_ns());
      } else {
        step.kernel(ops::KernelArgs{in, out, step.attrs, ctx, key});
      }
    } catch (Error& e) {
      e.add_context(fmt::format("graph node '{}' ({})", step.name, step.op->name));
      throw;
    }
    at += n_in + n_out;
  }
}

std::vector<NDArray> CachedOp::operator()(std::span<const NDArray> args) const {
  return (*this)(args, {});
}

std::vector<NDArray> CachedOp::operator()(std::span<const NDArray> args,
                                          std::span<const NDArray> outs) const {
  const Impl& im = *impl_;
  check_args(im.arg_names, im.arg_specs, args);
  check_outs(im.out_specs, args, outs);
  std::vector<ops::RngKey> keys;  // drawn now, in program order, for determinism
  if (im.any_random) {
    keys.reserve(im.steps.size());
    for (const Impl::Step& step : im.steps) {
      keys.push_back(step.op->random ? ops::next_rng_key() : ops::RngKey{});
    }
  }
  const bool no_destinations =
      std::none_of(outs.begin(), outs.end(), [](const NDArray& o) { return o.defined(); });
  if (im.options.static_alloc && no_destinations) {
    if (std::optional<Impl::KeptTake> take = im.take_kept(args)) {
      OpDetail detail;
      if (op_listener_installed()) detail = ops::describe_call(args, take->outputs);
      const Impl::KeptCall& k = *take->kept;
      engine().push(
          [impl = impl_, kept = take->kept, keys = std::move(keys)](const RunContext& ctx) {
            impl->run_steps(kept->flat, keys, nullptr, ctx);
          },
          k.reads, k.writes, im.device, Lane::kCompute, 0, "cached_op", std::move(detail));
      return std::move(take->outputs);
    }
  }
  Impl::BoundCall call = im.bind_call(args, outs);
  OpDetail detail;
  if (op_listener_installed()) detail = ops::describe_call(args, call.outputs);
  engine().push(
      [impl = impl_, flat = std::move(call.flat), keys = std::move(keys),
       scratch = std::move(call.scratch)](const RunContext& ctx) {
        impl->run_steps(flat, keys, scratch, ctx);
      },
      call.reads, call.writes, im.device, Lane::kCompute, 0, "cached_op", std::move(detail));
  return std::move(call.outputs);
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
