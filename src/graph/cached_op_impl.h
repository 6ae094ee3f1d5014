// What a compiled graph holds: its steps (one per operator node), its slots (one per value) and
// the buffers that memory planning gave the intermediate values. Private to src/graph
// (cached_op.cc compiles and runs it, plan_memory.cc plans its memory).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "janus/engine/engine.h"
#include "janus/graph/cached_op.h"

namespace janus::graph {

inline constexpr int kNoBuffer = -1;

inline size_t spec_bytes(const ops::TensorSpec& s) {
  return static_cast<size_t>(s.shape.numel()) * dtype_size(s.dtype);
}

/// Buffers are 64-byte multiples, so every view starts aligned for vector loads.
inline size_t round_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

struct CachedOp::Impl {
  struct Step {
    const ops::OpDef* op = nullptr;
    ops::KernelFn kernel = nullptr;
    ops::Attrs attrs;
    std::string name;
    std::vector<int> in, out;  // slots
  };
  // kArgumentView: the value of a view step (reshape, flatten, ...; OpDef::view_of) of an
  // argument or of another such view, bound at the call as a view of the argument: no step, no
  // copy, no buffer.
  // kOutputView: the value of a view step of a value that a step computes, when the view is a
  // graph output (a dense layer's flattened input, saved for the weight gradient): that value
  // becomes an output allocated per call too (a hidden one when it is no graph output itself)
  // and the view is bound at the call as a view of it: no step, no copy.
  enum class SlotKind : uint8_t {
    kArgument,
    kConstant,
    kOutput,
    kIntermediate,
    kArgumentView,
    kOutputView
  };
  struct Slot {
    SlotKind kind = SlotKind::kIntermediate;
    ops::TensorSpec spec;
    // Argument position (also of a view's argument), constant or output position (outputs past
    // the graph's are hidden ones), or for kOutputView the slot of the value it views.
    int index = -1;
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
  int hidden_outputs = 0;         // kOutput slots that views need but the graph does not return
  std::vector<int> flat_slots;    // each step's input slots then its output slots, in step order
  bool any_random = false;        // whether a step draws random numbers (needs a key per call)
  std::vector<size_t> buffer_bytes;
  // Every buffer lives in ONE block, buffer b at buffer_offsets[b] (64-byte multiples): a call
  // takes one block from the allocator, or writes one static block's var, however many buffers
  // the plan has.
  std::vector<size_t> buffer_offsets;
  size_t block_bytes = 0;
  bool any_intermediate = false;          // a slot of kind kIntermediate exists
  std::shared_ptr<Storage> static_block;  // with static_alloc (null without intermediate bytes)
  std::vector<NDArray> static_views;      // per slot (intermediates only) with static_alloc
  std::vector<int> mutated_args;
  Device device = cpu();
  MemoryPlan plan;

  // One call's values, as its engine operation sees them, and the engine vars it reads and
  // writes.
  struct BoundCall {
    std::vector<NDArray> flat;     // per flat_slots entry: each step's inputs then outputs
    std::vector<NDArray> outputs;  // per graph output
    std::vector<Var*> reads, writes;
    // Without static_alloc: the intermediates' storage (null when the graph has none), made here
    // without memory (and without an engine var: nothing outside the operation sees it); the
    // operation takes its block from the allocator when it starts and returns it when it ends.
    // Allocated at the push instead, a backward graph's buffers would be held through the whole
    // forward before it, since the frontend runs ahead.
    std::shared_ptr<Storage> scratch;
  };

  // With static_alloc, the values of a call kept for the calls after it while they pass the same
  // arrays (a model's parameters and one input): such a call builds no list, allocates no output
  // and copies no handle, and its operation reads no array object that the frontend wrote since
  // the list was made. Every handle here is the list's own (detached or made for it), so no
  // caller's copies or drops of an array touch the lines the kernels read through it. The
  // outputs' storages are the list's, written again by each call that takes it (once the caller
  // has dropped what the call before returned on them) and handed out in new array objects.
  struct KeptCall {
    std::vector<NDArray> flat;    // as BoundCall::flat
    std::vector<NDArray> values;  // per slot, what `flat` was built from (undefined: unused)
    std::vector<Var*> reads, writes;
    std::vector<const Storage*> arg_storages;  // per argument: the storage it binds...
    std::vector<size_t> arg_offsets;           // ...at this offset
    // Per kOutput slot index: the references that this list holds to the output's storage (its
    // value and the views of it); more mean that a caller still holds an earlier call's output.
    std::vector<long> output_refs;
  };
  // What take_kept returns: the list and the outputs the caller gets.
  struct KeptTake {
    std::shared_ptr<const KeptCall> kept;
    std::vector<NDArray> outputs;
  };

  void compile(const Symbol& symbol);
  // compile's steps, in order.
  std::unordered_map<const Node*, int> add_argument_slots(const std::vector<NodePtr>& args);
  void add_constant_slot(const Node& n, std::unordered_map<const Node*, int>& first_slot);
  void add_step(const Node& n, std::unordered_map<const Node*, int>& first_slot);
  void add_outputs(const std::unordered_map<const Node*, int>& first_slot);
  void bind_argument_views();
  void bind_output_views();
  void plan_memory();  // plan_memory.cc

  // take_kept's state, one call at a time.
  mutable std::mutex kept_mutex;
  mutable std::shared_ptr<const KeptCall> kept;
  // The previous call's arguments (storage, offset), without keeping their memory: a list is
  // kept only once a call repeats them, so that a loop over new batches holds none of them.
  mutable std::vector<std::weak_ptr<Storage>> last_arg_storages;
  mutable std::vector<size_t> last_arg_offsets;
  // The intermediates' views (per slot; undefined for other slots) into `block`, which holds
  // every buffer.
  std::vector<NDArray> make_views(const std::shared_ptr<Storage>& block) const;
  // A call: binds its values, then (inside its engine operation) runs the steps.
  BoundCall bind_call(std::span<const NDArray> args, std::span<const NDArray> outs) const;
  // The kept list for a call on `args` (static_alloc, no destination arrays) and the outputs
  // its caller gets; a new list when there is none for `args` and they are the arguments of the
  // call before, or when the caller still holds an output on the kept list's storage. nullopt
  // (the call binds its own values, bind_call) for arguments other than the call before's.
  std::optional<KeptTake> take_kept(std::span<const NDArray> args) const;
  bool repeats_last_call(std::span<const NDArray> args) const;  // with kept_mutex held
  std::shared_ptr<KeptCall> make_kept(std::span<const NDArray> args) const;
  void run_steps(std::span<const NDArray> flat, std::span<const ops::RngKey> keys,
                 const std::shared_ptr<Storage>& scratch, const RunContext& ctx) const;
};

}  // namespace janus::graph
