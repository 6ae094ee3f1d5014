// The operator registry: one OpDef per operator, registered once, in the operator's own file
// with JANUS_DEFINE_OP. Layer: ops.
//
//   JANUS_DEFINE_OP({
//       .name = "add",
//       .doc = "Elementwise sum of two arrays of the same shape.",
//       .inputs = {"a", "b"},
//       .outputs = {"y"},
//       .infer = infer_same_as_input(0),
//       .kernels = {{DeviceType::kCPU, add_cpu}},
//       .fusion = FusionClass::kElementwise,
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/engine/engine.h"

namespace janus::ops {

enum class AttrType : uint8_t { kInt, kFloat, kBool, kString, kInts, kShape, kDType, kDevice };

using AttrValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, Shape, DType, Device>;

/// One attribute of an operator: its name (used in docs and serialized graphs), type, default
/// (absent: required) and a one-line doc.
struct AttrDef {
  std::string_view name;
  AttrType type;
  std::optional<AttrValue> default_value;
  std::string_view doc;
};

struct OpDef;
class Attrs;
void complete_attrs(const OpDef& op, Attrs& attrs);

/// Attribute values of one call, by position in the OpDef's `attrs` list (typed, not keyed by
/// strings). Filled and type-checked against the OpDef by `invoke`. Operators read them through
/// their family's struct (`const ConvAttrs a = ConvAttrs::from(attrs)`, src/ops/typed_attrs.h),
/// never by position.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<AttrValue> values) : values_(values) {}
  explicit Attrs(std::vector<AttrValue> values) : values_(std::move(values)) {}

  template <typename T>
  const T& get(size_t index) const {
    return std::get<T>(values_[index]);
  }
  size_t size() const { return values_.size(); }
  const std::vector<AttrValue>& values() const { return values_; }
  std::vector<AttrValue>& values() { return values_; }
  /// The operator whose attribute list these values complete (set by complete_attrs; nullptr
  /// before), so that typed readers name it in their errors.
  const OpDef* op() const { return op_; }

 private:
  friend void complete_attrs(const OpDef& op, Attrs& attrs);
  std::vector<AttrValue> values_;
  const OpDef* op_ = nullptr;
};

/// One field of an operator family's attribute struct: the attribute it reads, by name and
/// type. `attr_fields<ConvAttrs>()` (src/ops/typed_attrs.h) lists a struct's fields in order.
struct AttrFieldDef {
  std::string_view name;
  AttrType type;
};

/// What shape inference knows of an array: no data.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
};

struct InferArgs {
  const OpDef& op;
  std::span<const TensorSpec> inputs;
  const Attrs& attrs;
};
/// Output specs from input specs and attributes. Throws the typed error of a caller's mistake
/// (ShapeError, TypeError, ...) naming the operator; runs synchronously in the caller's thread.
using InferFn = std::function<std::vector<TensorSpec>(const InferArgs&)>;

/// Counter-based random stream of one call: (seed, position of the call in the program).
struct RngKey {
  uint64_t seed = 0;
  uint64_t counter = 0;
};

struct KernelArgs {
  std::span<const NDArray> inputs;
  std::span<const NDArray> outputs;
  const Attrs& attrs;
  const RunContext& ctx;
  RngKey rng;

  const NDArray& in(size_t i) const { return inputs[i]; }
  const NDArray& out(size_t i) const { return outputs[i]; }
};
using KernelFn = void (*)(const KernelArgs&);
/// Per-shape set-up on the caller's thread, after shape inference and before the push (e.g.
/// building oneDNN primitives), so that kernels only execute.
using PrepareFn = void (*)(const InferArgs&, std::span<const TensorSpec> outputs);

enum class FusionClass : uint8_t { kElementwise, kBroadcast, kReduction, kOpaque };

/// What a gradient rule sees: the call's inputs and outputs (data only, no autograd history),
/// the gradients of the outputs (always defined, zeros for an output that was not used) and the
/// attributes.
struct GradArgs {
  std::span<const NDArray> inputs;
  std::span<const NDArray> outputs;
  std::span<const NDArray> output_grads;
  const Attrs& attrs;
  /// Which inputs need a gradient (empty: all). A rule may skip the work for the others and
  /// return an undefined NDArray there (the data input of a network's first layer).
  std::span<const uint8_t> needed = {};
  /// Per input, an array that the rule may write that input's gradient into (invoke_to) and
  /// return as the gradient itself, instead of a new array: a parameter's gradient buffer,
  /// which backward would otherwise copy the gradient into. Undefined (or an empty span): none.
  /// Only the gradient itself may go there, written once.
  std::span<const NDArray> grad_buffers = {};

  const NDArray& x(size_t i) const { return inputs[i]; }
  const NDArray& y(size_t i) const { return outputs[i]; }
  const NDArray& dy(size_t i) const { return output_grads[i]; }
  bool needs(size_t i) const { return needed.empty() || needed[i] != 0; }
  NDArray grad_buffer(size_t i) const {
    return i < grad_buffers.size() ? grad_buffers[i] : NDArray();
  }
};
/// The gradient of each input, built from registered operators (so it runs on the engine,
/// traces and differentiates again). An undefined NDArray for an input that has none (e.g.
/// integer labels).
using GradFn = std::function<std::vector<NDArray>(const GradArgs&)>;

struct DeviceKernel {
  DeviceType device;
  KernelFn fn;
};

struct OpDef {
  std::string_view name;
  std::string_view doc;  // one line; more may follow after a blank line
  std::vector<std::string_view> inputs;
  std::vector<std::string_view> outputs;
  std::vector<AttrDef> attrs;
  /// The fields of the struct that reads `attrs` (`.attr_fields = attr_fields<ConvAttrs>()`),
  /// one per attribute, in order: register_op checks that each field reads the attribute of its
  /// position, by name and type, so that a field and its position cannot drift apart. Empty
  /// only for an operator without attributes.
  std::vector<AttrFieldDef> attr_fields;
  /// The last input repeats: a call may give any number of inputs >= inputs.size().
  bool variadic = false;
  InferFn infer;
  std::vector<DeviceKernel> kernels;
  PrepareFn prepare = nullptr;
  /// The gradient rule; leave empty and set `not_differentiable` when that is the truth.
  GradFn grad;
  bool not_differentiable = false;
  FusionClass fusion = FusionClass::kOpaque;
  /// Input whose buffer the output may reuse when nothing else reads it (-1: none).
  int inplace_input = -1;
  /// The one output is this input's elements in the same order under another shape (reshape,
  /// flatten, squeeze, expand_dims; -1: none). An imperative call returns a view of the input
  /// (the same storage and dependency var, as NDArray::reshape) and runs no kernel; compiled
  /// graphs run the kernel, which the memory planner makes in place (inplace_input).
  int view_of = -1;
  /// Runs on the copy lane of the output's device (transfers).
  bool copy_lane = false;
  /// Inputs may live on different devices (transfers); otherwise they must share one.
  bool multi_device = false;
  /// The kernel draws random numbers: each call gets its own RngKey.
  bool random = false;
  /// Inputs that the kernel also updates in place (auxiliary state such as batch norm's running
  /// statistics, MXNet's "mutate inputs"): the engine orders the call as a write of them. Their
  /// gradient is undefined.
  std::vector<int> mutable_inputs = {};

  KernelFn kernel_for(DeviceType device) const;
  /// Whether a call may give `count` inputs.
  bool accepts_inputs(size_t count) const {
    return variadic ? count >= inputs.size() : count == inputs.size();
  }
  /// The name of input `i` (the repeated last name for a variadic operator's extra inputs).
  std::string_view input_name(size_t i) const { return inputs[std::min(i, inputs.size() - 1)]; }
  int attr_index(std::string_view attr_name) const;  // -1 when absent
};

/// Calls op.prepare (when it has one) on this thread, with the thread's OpenMP thread count set
/// meanwhile to that of a kernel on the output's device (Engine::kernel_threads): oneDNN fixes
/// a primitive's threads when it is built. Whatever prepare runs on this thread must not start
/// an OpenMP team here (see settle_onednn_state): a team on a frontend thread would stay for
/// the life of the process beside the compute worker's, and with more OpenMP threads than
/// cores libgomp's barriers sleep at once, so every parallel kernel after that pays a wake-up.
void run_prepare(const OpDef& op, const InferArgs& args, std::span<const TensorSpec> outputs);

/// Where `op.attr_fields` disagrees with `op.attrs` (a count, or a field that reads another
/// attribute's name or type than the one at its position), in words; "" when they agree.
std::string attr_fields_mismatch(const OpDef& op);

/// Adds `def` to the registry; throws InternalError on a duplicate name, a missing field or
/// attribute fields that disagree with the attributes (attr_fields_mismatch).
const OpDef& register_op(OpDef def);
/// The operator called `name`; throws ValueError naming it (and close names) when unknown.
const OpDef& get_op(std::string_view name);
const OpDef* find_op(std::string_view name);
/// Every registered operator, sorted by name.
std::vector<const OpDef*> all_ops();

/// Runs `op` on `inputs`: checks devices and attributes, infers the outputs (errors are thrown
/// here, synchronously), allocates them and pushes the kernel to the engine. Returns at once.
std::vector<NDArray> invoke(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs);
inline std::vector<NDArray> invoke(const OpDef& op, std::initializer_list<NDArray> inputs,
                                   Attrs attrs = {}) {
  return invoke(op, std::span<const NDArray>(inputs.begin(), inputs.size()), std::move(attrs));
}

/// invoke, writing output i into `outputs[i]` where that is defined (an existing array of
/// exactly the shape, dtype and device that the operator gives that output, sharing no memory
/// with an input: ShapeError or ValueError otherwise) instead of a new array; undefined entries
/// get new arrays. The call is a write of the given arrays, ordered after their pending uses
/// like any write. `outputs` has one entry per output. Not for an operator whose output is a
/// view of its input (ValueError), nor while a graph is traced (TraceError).
void invoke_to(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs,
               std::span<NDArray> outputs);

/// What the profiler shows of a call: the shapes of its inputs, then of its outputs, and the
/// bytes they hold. invoke builds it only while the profiler listens (op_listener_installed()).
OpDetail describe_call(std::span<const NDArray> inputs, std::span<const NDArray> outputs);

/// Fills the defaults of absent trailing attributes and checks each value's type against the
/// OpDef (widening int to float and ints to shape), and binds `attrs` to `op`. What invoke does
/// first; graph loaders use it.
void complete_attrs(const OpDef& op, Attrs& attrs);

/// Global seed of the counter-based generator; resets the call counter, so the same program
/// after the same seed draws the same numbers under any engine and worker count.
void seed(uint64_t value);
/// The key for the next random call (advances the call counter).
RngKey next_rng_key();

/// Sees every operator call of its thread after the outputs exist and before invoke returns
/// (autograd records the call, the tracer appends a graph node). Observers nest: the innermost
/// scope is called first.
class InvokeObserver {
 public:
  virtual ~InvokeObserver() = default;
  virtual void on_invoke(const OpDef& op, std::span<const NDArray> inputs, const Attrs& attrs,
                         std::span<const NDArray> outputs) = 0;
};

/// Installs `observer` for the current thread while the scope lives.
class ScopedInvokeObserver {
 public:
  explicit ScopedInvokeObserver(InvokeObserver* observer);
  ~ScopedInvokeObserver();
  ScopedInvokeObserver(const ScopedInvokeObserver&) = delete;
  ScopedInvokeObserver& operator=(const ScopedInvokeObserver&) = delete;
};

/// While a graph is traced on this thread, invoke runs no kernel: after the checks and shape
/// inference it hands the call to the hook, which records a node and returns placeholder
/// outputs (janus::placeholder). Layer graph implements it.
class TraceHook {
 public:
  virtual ~TraceHook() = default;
  virtual std::vector<NDArray> on_trace(const OpDef& op, std::span<const NDArray> inputs,
                                        const Attrs& attrs,
                                        std::span<const TensorSpec> outputs) = 0;
};

/// Installs `hook` for the current thread while the scope lives; nullptr suspends tracing (for
/// work that must really run during a trace, such as a parameter's deferred initialization).
class ScopedTraceHook {
 public:
  explicit ScopedTraceHook(TraceHook* hook);
  ~ScopedTraceHook();
  ScopedTraceHook(const ScopedTraceHook&) = delete;
  ScopedTraceHook& operator=(const ScopedTraceHook&) = delete;

 private:
  TraceHook* prev_;
};

/// The engine priority of the operators that this thread invokes while the scope lives (0
/// outside any): larger runs first among ready operations of a lane. Collectives give the
/// reductions of the values needed first a higher one.
class ScopedPriority {
 public:
  explicit ScopedPriority(int priority);
  ~ScopedPriority();
  ScopedPriority(const ScopedPriority&) = delete;
  ScopedPriority& operator=(const ScopedPriority&) = delete;

 private:
  int prev_;
};

/// The hook of the trace running on this thread, or nullptr.
TraceHook* current_trace_hook();

struct OpRegistrar {
  explicit OpRegistrar(OpDef def) { register_op(std::move(def)); }
};

std::string_view attr_type_name(AttrType type);
std::string attr_value_to_string(const AttrValue& value);

}  // namespace janus::ops

#define JANUS_OP_CONCAT_INNER(a, b) a##b
#define JANUS_OP_CONCAT(a, b) JANUS_OP_CONCAT_INNER(a, b)
/// Registers one operator at static-initialization time: JANUS_DEFINE_OP({.name = ..., ...}).
#define JANUS_DEFINE_OP(...)                              \
  static const ::janus::ops::OpRegistrar JANUS_OP_CONCAT( \
      janus_op_registrar_, __LINE__)(::janus::ops::OpDef __VA_ARGS__)
