// Fused updates: collected in-place calls, pushed as one engine operation per device.
#include "fused_updates.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"

namespace janus::optim {
namespace {

void add_var(std::vector<Var*>& vars, Var* var) {
  if (std::find(vars.begin(), vars.end(), var) == vars.end()) vars.push_back(var);
}

}  // namespace

FusedUpdates::FusedUpdates(int priority) : priority_(priority), hook_(this) {}

FusedUpdates::~FusedUpdates() {
  if (groups_.empty()) return;
  try {
    push();
  } catch (...) {
    // Only reached while an exception unwinds the caller: the calls collected so far were
    // checked and are pushed by push(); one that cannot be pushed is dropped with the error.
  }
}

FusedUpdates::Group& FusedUpdates::group(Device device) {
  for (Group& g : groups_) {
    if (g.device == device) return g;
  }
  groups_.push_back(Group{device, {}, {}});
  return groups_.back();
}

void FusedUpdates::scatter_first(const NDArray& flat, std::vector<NDArray> grads,
                                 std::vector<int64_t> offsets) {
  JANUS_ASSERT(flat.device().is_cpu() && grads.size() == offsets.size(),
               "FusedUpdates: a scatter needs a flat array in host memory and one offset per "
               "gradient");
  group(flat.device()).scatters.push_back(Scatter{flat, std::move(grads), std::move(offsets)});
}

std::vector<NDArray> FusedUpdates::on_trace(const ops::OpDef& op, std::span<const NDArray> inputs,
                                            const ops::Attrs& attrs,
                                            std::span<const ops::TensorSpec> outputs) {
  const bool fusible =
      outputs.empty() && !inputs.empty() && !op.mutable_inputs.empty() && op.prepare == nullptr &&
      !op.copy_lane && !op.random && inputs[0].device().is_cpu() &&
      std::all_of(inputs.begin(), inputs.end(),
                  [&](const NDArray& a) { return a.device() == inputs[0].device(); });
  if (fusible) {
    const ops::KernelFn kernel = op.kernel_for(inputs[0].device().type);
    if (kernel != nullptr) {
      group(inputs[0].device())
          .calls.push_back(Call{kernel, std::vector<NDArray>(inputs.begin(), inputs.end()), attrs,
                                op.mutable_inputs});
      return {};
    }
  }
  // Anything else runs now, after what was collected.
  push();
  const ops::ScopedTraceHook off(nullptr);
  return ops::invoke(op, inputs, attrs);
}

void FusedUpdates::push() {
  std::vector<Group> groups = std::move(groups_);
  groups_.clear();
  for (Group& g : groups) {
    std::vector<Var*> reads, writes;
    int64_t bytes = 0;
    for (const Scatter& s : g.scatters) {
      add_var(reads, s.flat.var());
      for (const NDArray& grad : s.grads) add_var(writes, grad.var());
      bytes += static_cast<int64_t>(2 * s.flat.nbytes());
    }
    for (const Call& c : g.calls) {
      for (int i : c.mutable_inputs) add_var(writes, c.inputs[static_cast<size_t>(i)].var());
    }
    for (const Call& c : g.calls) {
      for (const NDArray& a : c.inputs) {
        if (std::find(writes.begin(), writes.end(), a.var()) == writes.end()) {
          add_var(reads, a.var());
        }
        bytes += static_cast<int64_t>(a.nbytes());
      }
    }
    OpDetail detail;
    if (op_listener_installed()) detail.bytes = bytes;
    engine().push(
        [scatters = std::move(g.scatters), calls = std::move(g.calls)](const RunContext& ctx) {
          for (const Scatter& s : scatters) {
            const char* base = static_cast<const char*>(s.flat.raw_data());
            const size_t item = dtype_size(s.flat.dtype());
            for (size_t j = 0; j < s.grads.size(); ++j) {
              if (s.grads[j].nbytes() == 0) continue;
              std::memcpy(s.grads[j].raw_data(), base + static_cast<size_t>(s.offsets[j]) * item,
                          s.grads[j].nbytes());
            }
          }
          for (const Call& c : calls) {
            c.kernel(ops::KernelArgs{c.inputs, {}, c.attrs, ctx, ops::RngKey{}});
          }
        },
        reads, writes, g.device, Lane::kCompute, priority_, "fused_update", std::move(detail));
  }
}

}  // namespace janus::optim
