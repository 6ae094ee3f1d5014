// Recording: scopes, the invoke observer that builds nodes, and the leaf API.
#include "tape.h"

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

namespace janus::autograd {
namespace {

thread_local bool tls_recording = false;
thread_local bool tls_training = false;

// While recording, a node for a call that has an input needing a gradient (null otherwise);
// the outputs get their history. The caller fills in what the call was.
std::shared_ptr<Node> record_node(std::span<const NDArray> inputs,
                                  std::span<const NDArray> outputs) {
  if (!tls_recording) return nullptr;
  bool any = false;
  for (const NDArray& x : inputs) any = any || needs_grad(x.autograd_meta());
  if (!any) return nullptr;
  auto node = std::make_shared<Node>();
  for (const NDArray& x : inputs) {
    node->inputs.push_back(x.detach());
    node->input_meta.push_back(needs_grad(x.autograd_meta()) ? x.autograd_meta() : nullptr);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->outputs.push_back(outputs[i].detach());
    auto meta = std::make_shared<AutogradMeta>();
    meta->node = node;
    meta->output_index = static_cast<int>(i);
    outputs[i].set_autograd_meta(std::move(meta));
  }
  return node;
}

// Appends a node for every call that has an input needing a gradient.
class Recorder final : public ops::InvokeObserver {
 public:
  void on_invoke(const ops::OpDef& op, std::span<const NDArray> inputs, const ops::Attrs& attrs,
                 std::span<const NDArray> outputs) override {
    if (auto node = record_node(inputs, outputs)) {
      node->op = &op;
      node->attrs = attrs;
    }
  }
};

// The recorder observes only while some RecordScope is alive on this thread.
thread_local Recorder tls_recorder;
thread_local int tls_record_depth = 0;
thread_local std::unique_ptr<ops::ScopedInvokeObserver> tls_observer_scope;

}  // namespace

bool needs_grad(const std::shared_ptr<AutogradMeta>& meta) {
  if (!meta) return false;
  return meta->node != nullptr || meta->req != GradReq::kNull;
}

RecordScope::RecordScope(bool train_mode)
    : prev_recording_(tls_recording), prev_training_(tls_training) {
  if (tls_record_depth++ == 0) {
    tls_observer_scope = std::make_unique<ops::ScopedInvokeObserver>(&tls_recorder);
  }
  tls_recording = true;
  tls_training = train_mode;
}

RecordScope::~RecordScope() {
  tls_recording = prev_recording_;
  tls_training = prev_training_;
  if (--tls_record_depth == 0) tls_observer_scope.reset();
}

PauseScope::PauseScope(bool train_mode)
    : prev_recording_(tls_recording), prev_training_(tls_training) {
  tls_recording = false;
  tls_training = train_mode;
}

PauseScope::~PauseScope() {
  tls_recording = prev_recording_;
  tls_training = prev_training_;
}

void record_function(std::string name, std::span<const NDArray> inputs,
                     std::span<const NDArray> outputs, ops::GradFn grad) {
  JANUS_CHECK(grad != nullptr, ValueError, "record_function '{}': no gradient rule given", name);
  if (auto node = record_node(inputs, outputs)) {
    node->function_name = std::move(name);
    node->function_grad = std::move(grad);
  }
}

bool is_recording() { return tls_recording; }
bool is_training() { return tls_training; }

void attach_grad(const NDArray& x, GradReq req) {
  JANUS_CHECK(x.defined(), ValueError, "attach_grad: the array is undefined");
  JANUS_CHECK(is_floating(x.dtype()), TypeError,
              "attach_grad: an array of dtype {} cannot have a gradient, expected a floating dtype",
              x.dtype());
  if (req == GradReq::kNull) {
    x.set_autograd_meta(nullptr);
    return;
  }
  auto meta = std::make_shared<AutogradMeta>();
  meta->req = req;
  meta->grad = zeros(x.shape(), x.dtype(), x.device());
  x.set_autograd_meta(std::move(meta));
}

NDArray grad(const NDArray& x) {
  const auto& meta = x.defined() ? x.autograd_meta() : nullptr;
  JANUS_CHECK(meta && meta->is_leaf() && meta->req != GradReq::kNull, ValueError,
              "grad: the array (shape {}) has no gradient buffer; call autograd::attach_grad on it "
              "before recording",
              x.defined() ? x.shape().to_string() : "<undefined>");
  return meta->grad;
}

NDArray overwritten_grad(const NDArray& x) {
  const auto& meta = x.defined() ? x.autograd_meta() : nullptr;
  return meta && meta->is_leaf() && meta->req == GradReq::kWrite ? meta->grad : NDArray();
}

bool requires_grad(const NDArray& x) { return x.defined() && needs_grad(x.autograd_meta()); }

NDArray detach(const NDArray& x) {
  JANUS_CHECK(x.defined(), ValueError, "detach: the array is undefined");
  return x.detach();
}

}  // namespace janus::autograd
