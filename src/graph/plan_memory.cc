// Memory planning of a compiled graph: which buffer each intermediate value lives in.
#include <algorithm>
#include <vector>

#include "cached_op_impl.h"

namespace janus::graph {
namespace {

// A buffer of at least `bytes` for a new value: the smallest free one that fits, else the
// largest free one grown to fit (sizes are only decided here, before anything is allocated,
// so growing beats adding one beside it), else a new one.
int take_buffer(std::vector<int>& free_list, std::vector<size_t>& buffer_bytes, size_t bytes) {
  auto best = free_list.end();
  for (auto it = free_list.begin(); it != free_list.end(); ++it) {
    const size_t have = buffer_bytes[static_cast<size_t>(*it)];
    if (have >= bytes &&
        (best == free_list.end() || have < buffer_bytes[static_cast<size_t>(*best)])) {
      best = it;
    }
  }
  if (best == free_list.end() && !free_list.empty()) {
    best = std::max_element(free_list.begin(), free_list.end(), [&](int a, int b) {
      return buffer_bytes[static_cast<size_t>(a)] < buffer_bytes[static_cast<size_t>(b)];
    });
    buffer_bytes[static_cast<size_t>(*best)] = bytes;
  }
  if (best == free_list.end()) {
    buffer_bytes.push_back(bytes);
    return static_cast<int>(buffer_bytes.size()) - 1;
  }
  const int buffer = *best;
  free_list.erase(best);
  return buffer;
}

}  // namespace

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
        // A broadcast input is read again after the first outputs are written: only an input
        // with as many elements as the output (its shape, or a reshape's) may be overwritten.
        if (in.kind == SlotKind::kIntermediate && in.last_use == static_cast<int>(s) && read_once &&
            in.spec.shape.numel() == out.spec.shape.numel() &&
            buffer_bytes[static_cast<size_t>(in.buffer)] >= bytes) {
          out.buffer = in.buffer;
          taken.push_back(in.buffer);
          ++plan.inplace;
          continue;
        }
      }
      out.buffer = take_buffer(free_list, buffer_bytes, bytes);
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

}  // namespace janus::graph
