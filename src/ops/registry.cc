// The operator registry and `invoke`, the path of every operator call.
#include "janus/ops/registry.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "janus/base/error.h"
#include "janus/base/omp_threads.h"
#include "janus/engine/array.h"

#include "invoke_one.h"

namespace janus::ops {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string_view, std::unique_ptr<OpDef>> ops;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: ops are looked up during shutdown too
  return *r;
}

bool attr_matches(AttrType type, const AttrValue& v) {
  switch (type) {
    case AttrType::kInt:
      return std::holds_alternative<int64_t>(v);
    case AttrType::kFloat:
      return std::holds_alternative<double>(v);
    case AttrType::kBool:
      return std::holds_alternative<bool>(v);
    case AttrType::kString:
      return std::holds_alternative<std::string>(v);
    case AttrType::kInts:
      return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::kShape:
      return std::holds_alternative<Shape>(v);
    case AttrType::kDType:
      return std::holds_alternative<DType>(v);
    case AttrType::kDevice:
      return std::holds_alternative<Device>(v);
  }
  return false;
}

// Widening conversions a caller may rely on: an int where a float is expected, a list of ints
// where a shape is expected.
AttrValue coerce(AttrType type, AttrValue v) {
  if (type == AttrType::kFloat && std::holds_alternative<int64_t>(v)) {
    return static_cast<double>(std::get<int64_t>(v));
  }
  if (type == AttrType::kShape && std::holds_alternative<std::vector<int64_t>>(v)) {
    return Shape(std::get<std::vector<int64_t>>(v));
  }
  if (type == AttrType::kInts && std::holds_alternative<Shape>(v)) {
    return std::get<Shape>(v).dims();
  }
  return v;
}

}  // namespace

void complete_attrs(const OpDef& op, Attrs& attrs) {
  auto& values = attrs.values();
  JANUS_CHECK(values.size() <= op.attrs.size(), ValueError,
              "{}: got {} attributes, expected at most {}", op.name, values.size(),
              op.attrs.size());
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    const AttrDef& def = op.attrs[i];
    if (i >= values.size()) {
      JANUS_CHECK(def.default_value.has_value(), ValueError,
                  "{}: attribute '{}' is required and was not given", op.name, def.name);
      values.push_back(*def.default_value);
      continue;
    }
    values[i] = coerce(def.type, std::move(values[i]));
    JANUS_CHECK(attr_matches(def.type, values[i]), TypeError,
                "{}: attribute '{}' has the wrong type, expected {}", op.name, def.name,
                attr_type_name(def.type));
  }
  attrs.op_ = &op;
}

namespace {

// What this thread's calls see. One thread_local (each access to one from a shared library is
// a call), which a call looks up once.
struct ThreadCalls {
  std::vector<InvokeObserver*> observers;
  TraceHook* trace_hook = nullptr;
  int priority = 0;
  // The input specs of the last call, kept so that the next one reuses them and their shapes'
  // storage (InputSpecs).
  std::vector<TensorSpec> spare_specs;
};
thread_local ThreadCalls tls_calls;

std::atomic<uint64_t> g_seed{0};
std::atomic<uint64_t> g_rng_counter{0};

}  // namespace

KernelFn OpDef::kernel_for(DeviceType device) const {
  for (const auto& k : kernels) {
    if (k.device == device) return k.fn;
  }
  return nullptr;
}

int OpDef::attr_index(std::string_view attr_name) const {
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].name == attr_name) return static_cast<int>(i);
  }
  return -1;
}

std::string attr_fields_mismatch(const OpDef& op) {
  if (op.attr_fields.size() != op.attrs.size()) {
    return fmt::format("{} attributes but {} fields in its attribute struct", op.attrs.size(),
                       op.attr_fields.size());
  }
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    const AttrDef& def = op.attrs[i];
    const AttrFieldDef& field = op.attr_fields[i];
    if (field.name == def.name && field.type == def.type) continue;
    return fmt::format(
        "attribute {} is '{}' ({}) but field {} of its attribute struct reads '{}' ({})", i,
        def.name, attr_type_name(def.type), i, field.name, attr_type_name(field.type));
  }
  return "";
}

const OpDef& register_op(OpDef def) {
  JANUS_ASSERT(!def.name.empty(), "an operator was registered without a name");
  JANUS_ASSERT(def.infer != nullptr, "operator '{}' has no shape rule", def.name);
  const std::string fields_mismatch = def.attr_fields.empty() ? "" : attr_fields_mismatch(def);
  JANUS_ASSERT(fields_mismatch.empty(), "operator '{}': {}", def.name, fields_mismatch);
  for (int i : def.mutable_inputs) {
    JANUS_ASSERT(i >= 0 && static_cast<size_t>(i) < def.inputs.size(),
                 "operator '{}' mutates input {}, but it has {} inputs", def.name, i,
                 def.inputs.size());
  }
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  JANUS_ASSERT(!r.ops.contains(def.name), "operator '{}' is registered twice", def.name);
  auto owned = std::make_unique<OpDef>(std::move(def));
  const OpDef& ref = *owned;
  r.ops.emplace(ref.name, std::move(owned));
  return ref;
}

const OpDef* find_op(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.ops.find(name);
  return it == r.ops.end() ? nullptr : it->second.get();
}

namespace {

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string close_names(std::string_view name) {
  std::vector<std::string_view> close;
  for (const OpDef* op : all_ops()) {
    const bool prefix = op->name.starts_with(name) || name.starts_with(op->name);
    if (prefix || edit_distance(name, op->name) <= std::max<size_t>(2, name.size() / 4)) {
      close.push_back(op->name);
    }
  }
  if (close.empty()) return "";
  return fmt::format("; did you mean {}?", fmt::join(close, ", "));
}

}  // namespace

const OpDef& get_op(std::string_view name) {
  const OpDef* op = find_op(name);
  JANUS_CHECK(op != nullptr, ValueError,
              "ops: no operator named '{}'{} (run `janus ops` for the list)", name,
              close_names(name));
  return *op;
}

std::vector<const OpDef*> all_ops() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<const OpDef*> out;
  for (const auto& [name, op] : r.ops) out.push_back(op.get());
  return out;
}

void seed(uint64_t value) {
  g_seed.store(value, std::memory_order_relaxed);
  g_rng_counter.store(0, std::memory_order_relaxed);
}

RngKey next_rng_key() {
  return RngKey{g_seed.load(std::memory_order_relaxed),
                g_rng_counter.fetch_add(1, std::memory_order_relaxed)};
}

OpDetail describe_call(std::span<const NDArray> inputs, std::span<const NDArray> outputs) {
  OpDetail detail;
  for (const NDArray& a : inputs) {
    detail.shapes += a.shape().to_string();
    detail.shapes += ' ';
    detail.bytes += static_cast<int64_t>(a.nbytes());
  }
  detail.shapes += "->";
  for (const NDArray& a : outputs) {
    detail.shapes += ' ';
    detail.shapes += a.shape().to_string();
    detail.bytes += static_cast<int64_t>(a.nbytes());
  }
  return detail;
}

void run_prepare(const OpDef& op, const InferArgs& args, std::span<const TensorSpec> outputs) {
  if (op.prepare == nullptr) return;
  const Device device = outputs.empty() ? args.inputs[0].device : outputs[0].device;
  const ScopedOmpThreads threads(engine().kernel_threads(device));
  op.prepare(args, outputs);
}

namespace {

// Tells the observers of this thread (autograd, tracing) about a call, innermost first.
void notify_observers(const ThreadCalls& calls, const OpDef& op, std::span<const NDArray> inputs,
                      const Attrs& attrs, std::span<const NDArray> outputs) {
  for (auto it = calls.observers.rbegin(); it != calls.observers.rend(); ++it) {
    (*it)->on_invoke(op, inputs, attrs, outputs);
  }
}

// A call of an operator whose output is a view of an input (OpDef::view_of): no kernel, no
// engine operation; observers (autograd) see it as any call.
void invoke_view(const OpDef& op, std::span<const NDArray> inputs, const Attrs& attrs,
                 const TensorSpec& out, std::span<NDArray> outputs) {
  const NDArray& src = inputs[static_cast<size_t>(op.view_of)];
  JANUS_ASSERT(
      op.outputs.size() == 1 && out.dtype == src.dtype() && out.device == src.device() &&
          out.shape.numel() == src.size(),
      "{}: declared a view of input {} but its shape rule gave {} {} on {} for {} {} on {}",
      op.name, op.view_of, out.shape, out.dtype, out.device, src.shape(), src.dtype(),
      src.device());
  outputs[0] = src.reshape(out.shape);
  notify_observers(tls_calls, op, inputs, attrs, outputs);
}

// The specs of a call's inputs, after checking them: their count, each one defined, one device
// (unless the operator spans devices), no placeholder of a traced graph outside its trace.
// Written into `specs`, whose elements (and their shapes' storage) are reused when it has them.
void input_specs(const OpDef& op, std::span<const NDArray> inputs, bool tracing,
                 std::vector<TensorSpec>& specs) {
  JANUS_CHECK(op.accepts_inputs(inputs.size()), ValueError, "{}: got {} inputs, expected {}{} ({})",
              op.name, inputs.size(), op.variadic ? "at least " : "", op.inputs.size(),
              fmt::join(op.inputs, ", "));
  specs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    JANUS_CHECK(inputs[i].defined(), ValueError, "{}: input '{}' is an undefined array", op.name,
                op.input_name(i));
    if (!op.multi_device && i > 0) {
      JANUS_CHECK(inputs[i].device() == inputs[0].device(), DeviceError,
                  "{}: input '{}' is on {} but input '{}' is on {}, expected all inputs on one "
                  "device (copy with copyto first)",
                  op.name, op.input_name(i), inputs[i].device(), op.input_name(0),
                  inputs[0].device());
    }
    JANUS_CHECK(tracing || !inputs[i].is_placeholder(), TraceError,
                "{}: input '{}' is a symbolic placeholder of a traced graph (shape {}), used "
                "outside the trace that made it; placeholders hold no data",
                op.name, op.input_name(i), inputs[i].shape());
    specs[i].shape = inputs[i].shape();
    specs[i].dtype = inputs[i].dtype();
    specs[i].device = inputs[i].device();
  }
}

// A call's input specs, in the thread's spare (ThreadCalls::spare_specs) while the call runs:
// a small call allocates nothing for them. A call nested in another (an observer that invokes)
// finds the spare taken and makes its own.
class InputSpecs {
 public:
  InputSpecs(ThreadCalls& calls, const OpDef& op, std::span<const NDArray> inputs)
      : calls_(calls), specs_(std::move(calls.spare_specs)) {
    input_specs(op, inputs, calls.trace_hook != nullptr, specs_);
  }
  InputSpecs(const InputSpecs&) = delete;
  InputSpecs& operator=(const InputSpecs&) = delete;
  ~InputSpecs() { calls_.spare_specs = std::move(specs_); }
  std::span<const TensorSpec> get() const { return specs_; }

 private:
  ThreadCalls& calls_;
  std::vector<TensorSpec> specs_;
};

// The specs of a call's outputs, from the operator's shape rule (which throws the caller's
// mistakes here, synchronously).
std::vector<TensorSpec> output_specs(const OpDef& op, std::span<const TensorSpec> inputs,
                                     const Attrs& attrs) {
  std::vector<TensorSpec> outputs = op.infer(InferArgs{op, inputs, attrs});
  JANUS_ASSERT(outputs.size() == op.outputs.size(), "{}: shape rule gave {} outputs, expected {}",
               op.name, outputs.size(), op.outputs.size());
  return outputs;
}

// The kernel of `op` for `device`; NotImplementedError when it has none.
KernelFn kernel_on(const OpDef& op, Device device) {
  check_device(device, op.name);
  const KernelFn kernel = op.kernel_for(device.type);
  JANUS_CHECK(kernel != nullptr, NotImplementedError, "{}: no kernel for {} devices", op.name,
              device.is_cpu() ? "cpu" : "gpu");
  return kernel;
}

// A list of vars held inline up to kInline entries, so that a common call allocates nothing
// for its dependency lists; longer lists (variadic operators) move to the heap.
class VarList {
 public:
  void push_back(Var* var) {
    if (heap_.empty() && size_ < kInline) {
      inline_[size_++] = var;
      return;
    }
    if (heap_.empty())
      heap_.assign(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(size_));
    heap_.push_back(var);
  }
  std::span<Var* const> span() const {
    if (heap_.empty()) return {inline_.data(), size_};
    return heap_;
  }

 private:
  static constexpr size_t kInline = 8;
  std::array<Var*, kInline> inline_{};
  size_t size_ = 0;  // of inline_, while heap_ is empty
  std::vector<Var*> heap_;
};

// The vars a call reads (its inputs) and writes (its outputs, then the inputs it mutates).
struct CallVars {
  CallVars(const OpDef& op, std::span<const NDArray> inputs, std::span<const NDArray> outputs) {
    for (const NDArray& a : inputs) reads.push_back(a.var());
    for (const NDArray& a : outputs) writes.push_back(a.var());
    for (int i : op.mutable_inputs) writes.push_back(inputs[static_cast<size_t>(i)].var());
  }
  VarList reads, writes;
};

// The arrays of a call with at most kMax inputs and outputs together (most calls), held inline
// so that the kernel's captures fit in the Kernel itself: nothing to allocate on the pushing
// thread and free on the worker.
struct SmallArrays {
  static constexpr size_t kMax = 3;
  SmallArrays(std::span<const NDArray> inputs, std::span<const NDArray> outputs)
      : count(static_cast<uint32_t>(inputs.size() + outputs.size())) {
    std::copy(inputs.begin(), inputs.end(), items.begin());
    std::copy(outputs.begin(), outputs.end(), items.begin() + inputs.size());
  }
  const NDArray* data() const { return items.data(); }
  size_t size() const { return count; }
  std::array<NDArray, kMax> items;
  uint32_t count;
};

// Pushes `kernel` on `arrays` (the inputs, then the outputs: a SmallArrays or a vector) to the
// engine; the kernel sees both as spans into `arrays`, which it owns until it has run.
template <typename Arrays>
void push_kernel(const OpDef& op, KernelFn kernel, Arrays arrays, const CallVars& vars, size_t n_in,
                 Attrs attrs, Device device, int priority, OpDetail detail) {
  const RngKey rng = op.random ? next_rng_key() : RngKey{};
  auto run = [kernel, arrays = std::move(arrays), n_in, attrs = std::move(attrs),
              rng](const RunContext& ctx) {
    std::span<const NDArray> all(arrays.data(), arrays.size());
    kernel(KernelArgs{all.first(n_in), all.subspan(n_in), attrs, ctx, rng});
  };
  // Kernel (engine.h) keeps captures of up to 120 bytes inline.
  static_assert(!std::is_same_v<Arrays, SmallArrays> || sizeof(run) <= 120,
                "a small call's kernel no longer fits in the Kernel's inline storage");
  engine().push(std::move(run), vars.reads.span(), vars.writes.span(), device,
                op.copy_lane ? Lane::kCopy : Lane::kCompute, priority, op.name, std::move(detail));
}

// An array that invoke_to writes output `i` into: the output's spec, and no storage shared
// with an input (a kernel reads its inputs while it writes its outputs).
void check_given_output(const OpDef& op, size_t i, const TensorSpec& spec, const NDArray& given,
                        std::span<const NDArray> inputs) {
  JANUS_CHECK(
      given.shape() == spec.shape && given.dtype() == spec.dtype && given.device() == spec.device,
      ShapeError,
      "{}: the array given for output '{}' is {} {} on {}, expected {} {} on {} (what the "
      "operator gives)",
      op.name, op.outputs[i], given.shape(), given.dtype(), given.device(), spec.shape, spec.dtype,
      spec.device);
  for (size_t k = 0; k < inputs.size(); ++k) {
    JANUS_CHECK(inputs[k].storage() != given.storage(), ValueError,
                "{}: the array given for output '{}' shares memory with input '{}', expected a "
                "separate array",
                op.name, op.outputs[i], op.input_name(k));
  }
}

// What invoke does, writing the op.outputs.size() outputs into `outputs`, so that a caller of
// a one-output operator (invoke_one) needs no vector for them. A defined entry of `outputs` is
// where that output goes (invoke_to).
void invoke_into(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs,
                 std::span<NDArray> outputs) {
  ThreadCalls& calls = tls_calls;
  const InputSpecs input_specs_of_call(calls, op, inputs);
  const std::span<const TensorSpec> in_specs = input_specs_of_call.get();
  complete_attrs(op, attrs);
  std::vector<TensorSpec> out_specs = output_specs(op, in_specs, attrs);
  const bool given =
      std::any_of(outputs.begin(), outputs.end(), [](const NDArray& a) { return a.defined(); });
  if (given) {
    JANUS_CHECK(calls.trace_hook == nullptr, TraceError,
                "{}: cannot write into given arrays while a graph is traced", op.name);
    JANUS_CHECK(op.view_of < 0, ValueError,
                "{}: its output is a view of its input, it cannot be written into a given array",
                op.name);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].defined()) check_given_output(op, i, out_specs[i], outputs[i], inputs);
    }
  }
  if (calls.trace_hook != nullptr) {
    std::vector<NDArray> traced = calls.trace_hook->on_trace(op, inputs, attrs, out_specs);
    JANUS_ASSERT(traced.size() == outputs.size(), "{}: the trace gave {} outputs, expected {}",
                 op.name, traced.size(), outputs.size());
    std::move(traced.begin(), traced.end(), outputs.begin());
    return;
  }
  if (op.view_of >= 0) return invoke_view(op, inputs, attrs, out_specs[0], outputs);

  run_prepare(op, InferArgs{op, in_specs, attrs}, out_specs);
  const Device device = out_specs.empty() ? inputs[0].device() : out_specs[0].device;
  const KernelFn kernel = kernel_on(op, device);
  for (size_t i = 0; i < out_specs.size(); ++i) {
    if (outputs[i].defined()) continue;  // given (checked above)
    outputs[i] = empty(out_specs[i].shape, out_specs[i].dtype, out_specs[i].device);
  }
  // Observers (autograd, tracing) need the attributes after the kernel took them.
  const Attrs observed = calls.observers.empty() ? Attrs() : attrs;
  OpDetail detail;
  if (op_listener_installed()) detail = describe_call(inputs, outputs);
  const CallVars vars(op, inputs, outputs);
  if (inputs.size() + outputs.size() <= SmallArrays::kMax) {
    push_kernel(op, kernel, SmallArrays(inputs, outputs), vars, inputs.size(), std::move(attrs),
                device, calls.priority, std::move(detail));
  } else {
    std::vector<NDArray> arrays;
    arrays.reserve(inputs.size() + outputs.size());
    arrays.insert(arrays.end(), inputs.begin(), inputs.end());
    arrays.insert(arrays.end(), outputs.begin(), outputs.end());
    push_kernel(op, kernel, std::move(arrays), vars, inputs.size(), std::move(attrs), device,
                calls.priority, std::move(detail));
  }
  notify_observers(calls, op, inputs, observed, outputs);
}

}  // namespace

std::vector<NDArray> invoke(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs) {
  std::vector<NDArray> outputs(op.outputs.size());
  invoke_into(op, inputs, std::move(attrs), outputs);
  return outputs;
}

void invoke_to(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs,
               std::span<NDArray> outputs) {
  JANUS_CHECK(outputs.size() == op.outputs.size(), ValueError,
              "{}: got {} arrays for its outputs, expected {} ({})", op.name, outputs.size(),
              op.outputs.size(), fmt::join(op.outputs, ", "));
  invoke_into(op, inputs, std::move(attrs), outputs);
}

NDArray invoke_one(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs) {
  JANUS_ASSERT(op.outputs.size() == 1, "invoke_one: operator '{}' has {} outputs, expected 1",
               op.name, op.outputs.size());
  NDArray out;
  invoke_into(op, inputs, std::move(attrs), std::span<NDArray>(&out, 1));
  return out;
}

NDArray invoke_one_to(const OpDef& op, std::span<const NDArray> inputs, Attrs attrs, NDArray out) {
  JANUS_ASSERT(op.outputs.size() == 1, "invoke_one_to: operator '{}' has {} outputs, expected 1",
               op.name, op.outputs.size());
  invoke_into(op, inputs, std::move(attrs), std::span<NDArray>(&out, 1));
  return out;
}

ScopedInvokeObserver::ScopedInvokeObserver(InvokeObserver* observer) {
  tls_calls.observers.push_back(observer);
}

ScopedInvokeObserver::~ScopedInvokeObserver() { tls_calls.observers.pop_back(); }

ScopedTraceHook::ScopedTraceHook(TraceHook* hook) : prev_(tls_calls.trace_hook) {
  tls_calls.trace_hook = hook;
}

ScopedTraceHook::~ScopedTraceHook() { tls_calls.trace_hook = prev_; }

TraceHook* current_trace_hook() { return tls_calls.trace_hook; }

ScopedPriority::ScopedPriority(int priority) : prev_(tls_calls.priority) {
  tls_calls.priority = priority;
}

ScopedPriority::~ScopedPriority() { tls_calls.priority = prev_; }

std::string_view attr_type_name(AttrType type) {
  constexpr std::string_view kNames[] = {"int",  "float", "bool",  "string",
                                         "ints", "shape", "dtype", "device"};
  return kNames[static_cast<int>(type)];
}

std::string attr_value_to_string(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(v, ", "));
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

}  // namespace janus::ops
