// Fused updates: collected in-place calls, pushed as one engine operation per device.
#include "fused_updates.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"

namespace janus::optim {
namespace {

void add_var(std::vector<Var*>& vars, Var* var) {
  if (std::find(vars.begin(), vars.end(), var) == vars.end()) vars.push_back(var);
}

// out[i] = the sum over the parts of part[i], added in the parts' order; each part is its
// base plus `at` bytes.
template <typename T>
void sum_parts(T* __restrict out, std::span<const char* const> bases, size_t at, int64_t n) {
  const T* a = reinterpret_cast<const T*>(bases[0] + at);
  const T* b = reinterpret_cast<const T*>(bases[1] + at);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
  for (size_t k = 2; k < bases.size(); ++k) {
    const T* p = reinterpret_cast<const T*>(bases[k] + at);
    for (int64_t i = 0; i < n; ++i) out[i] += p[i];
  }
}

}  // namespace

void FusedUpdates::run_scatter(const Scatter& s) {
  std::vector<const char*> bases;
  for (const NDArray& f : s.flats) bases.push_back(static_cast<const char*>(f.raw_data()));
  const size_t item = dtype_size(s.flats[0].dtype());
  for (size_t j = 0; j < s.grads.size(); ++j) {
    const NDArray& grad = s.grads[j];
    if (grad.nbytes() == 0) continue;
    const size_t at = static_cast<size_t>(s.offsets[j]) * item;
    if (bases.size() == 1) {
      std::memcpy(grad.raw_data(), bases[0] + at, grad.nbytes());
    } else if (s.flats[0].dtype() == DType::kFloat32) {
      sum_parts<float>(grad.data<float>(), bases, at, grad.size());
    } else {
      sum_parts<double>(grad.data<double>(), bases, at, grad.size());  // sum_first checked
    }
  }
}

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
  group(flat.device()).scatters.push_back(Scatter{{flat}, std::move(grads), std::move(offsets)});
}

void FusedUpdates::sum_first(std::vector<NDArray> flats, std::vector<NDArray> grads,
                             std::vector<int64_t> offsets) {
  JANUS_ASSERT(!flats.empty() && !grads.empty() && grads.size() == offsets.size(),
               "FusedUpdates: a sum needs flat arrays and one offset per gradient");
  const Device device = grads[0].device();
  for (const NDArray& f : flats) {
    JANUS_ASSERT(f.device().is_cpu() && peer_access(device, f.device()) &&
                     f.dtype() == flats[0].dtype() && f.size() == flats[0].size() &&
                     (f.dtype() == DType::kFloat32 || f.dtype() == DType::kFloat64),
                 "FusedUpdates: the flat arrays of a sum are alike, float32 or float64, in host "
                 "memory that {} reads",
                 device);
  }
  group(device).scatters.push_back(Scatter{std::move(flats), std::move(grads), std::move(offsets)});
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
          .calls.push_back(
              Call{kernel, std::vector<NDArray>(inputs.begin(), inputs.end()), attrs, &op});
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
      for (const NDArray& flat : s.flats) add_var(reads, flat.var());
      for (const NDArray& grad : s.grads) add_var(writes, grad.var());
      bytes += static_cast<int64_t>((s.flats.size() + 1) * s.flats[0].nbytes());
    }
    for (const Call& c : g.calls) {
      for (int i : c.op->mutable_inputs) add_var(writes, c.inputs[static_cast<size_t>(i)].var());
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
          for (const Scatter& s : scatters) run_scatter(s);
          for (const Call& c : calls) {
            c.kernel(ops::KernelArgs{c.inputs, {}, c.attrs, ctx, ops::RngKey{}});
          }
        },
        reads, writes, g.device, Lane::kCompute, priority_, "fused_update", std::move(detail));
  }
}

}  // namespace janus::optim
