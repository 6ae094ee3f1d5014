// What a compiled graph holds: its steps (one per operator node), its slots (one per value) and
// the buffers that memory planning gave the intermediate values. Private to src/graph
// (cached_op.cc compiles and runs it, plan_memory.cc plans its memory).
#pragma once

#include <memory>
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
  std::shared_ptr<Storage> static_block;  // with static_alloc (null without intermediates)
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

  void compile(const Symbol& symbol);
  // compile's steps, in order.
  std::unordered_map<const Node*, int> add_argument_slots(const std::vector<NodePtr>& args);
  void add_constant_slot(const Node& n, std::unordered_map<const Node*, int>& first_slot);
  void add_step(const Node& n, std::unordered_map<const Node*, int>& first_slot);
  void add_outputs(const std::unordered_map<const Node*, int>& first_slot);
  void bind_argument_views();
  void bind_output_views();
  void plan_memory();  // plan_memory.cc
  // The intermediates' views (per slot; undefined for other slots) into `block`, which holds
  // every buffer.
  std::vector<NDArray> make_views(const std::shared_ptr<Storage>& block) const;
  // A call: binds its values, then (inside its engine operation) runs the steps.
  BoundCall bind_call(std::span<const NDArray> args, std::span<const NDArray> outs) const;
  void run_steps(std::span<const NDArray> flat, std::span<const ops::RngKey> keys,
                 const std::shared_ptr<Storage>& scratch, const RunContext& ctx) const;
};

}  // namespace janus::graph
