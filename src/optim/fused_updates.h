// Fused updates: the in-place operator calls an optimizer makes for several parameters (one
// sgd_mom_update or adam_update each), run as one engine operation per device instead of one
// each. Private to src/optim: the Trainer fuses the updates of a gradient bucket's parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/ops/registry.h"

namespace janus::optim {

/// While it lives, the operator calls of this thread that write only their mutable inputs (no
/// outputs: the optimizers' updates) are checked as usual (shapes, attributes: errors are
/// thrown at the call) and collected instead of pushed; push() then pushes them, in call order,
/// as one engine operation per device on its compute lane. Any other call (creating an
/// optimizer's state with zeros or copyto) first pushes what was collected, then runs as
/// usual, so the order of every call stays the order they were made in.
///
/// Before the collected calls, the operation of device d can copy a bucket's flat array there
/// into the gradients it holds (scatter_first): the reduced bucket reaches the gradients and
/// the updates in one operation. Or it can sum the flat arrays of every device into them
/// (sum_first): the reduction itself joins the operation.
class FusedUpdates final : public ops::TraceHook {
 public:
  explicit FusedUpdates(int priority);
  ~FusedUpdates() override;  // pushes what is still collected (push() throws; this does not)
  FusedUpdates(const FusedUpdates&) = delete;
  FusedUpdates& operator=(const FusedUpdates&) = delete;

  /// `grads` (views of nothing else, on flat's device) get their slots of `flat` (element
  /// offsets) before the updates on flat's device run.
  void scatter_first(const NDArray& flat, std::vector<NDArray> grads, std::vector<int64_t> offsets);

  /// `grads` (views of nothing else, all on one device) get the sums of their slots over
  /// `flats` (float32 or float64, in host memory that the grads' device reads in place), added
  /// in the order given, before the updates on the grads' device run. Every device given the
  /// same flats in the same order computes bitwise the same sums.
  void sum_first(std::vector<NDArray> flats, std::vector<NDArray> grads,
                 std::vector<int64_t> offsets);

  /// Pushes every collected call: one engine operation per device.
  void push();

  std::vector<NDArray> on_trace(const ops::OpDef& op, std::span<const NDArray> inputs,
                                const ops::Attrs& attrs,
                                std::span<const ops::TensorSpec> outputs) override;

 private:
  struct Call {
    ops::KernelFn kernel;
    std::vector<NDArray> inputs;
    ops::Attrs attrs;
    const ops::OpDef* op;  // the registry's, which lives as long as the process
  };
  struct Scatter {
    std::vector<NDArray> flats;  // one: copied; several: summed
    std::vector<NDArray> grads;
    std::vector<int64_t> offsets;
  };
  struct Group {
    Device device;
    std::vector<Call> calls;
    std::vector<Scatter> scatters;
  };
  Group& group(Device device);
  static void run_scatter(const Scatter& s);

  int priority_;
  ops::ScopedTraceHook hook_;
  std::vector<Group> groups_;
};

}  // namespace janus::optim
