// The stores of one process: `local` sums on the stored value's device, `device` sums across
// the pushing devices themselves with a ring (parallel/allreduce.h).
#include "janus/optim/kvstore.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"
#include "janus/parallel/allreduce.h"

namespace janus::kvstore {
namespace {

enum class Reduce : uint8_t { kOnStore, kRing };

bool distinct_devices(std::span<const NDArray> arrays) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (arrays[i].device() == arrays[j].device()) return false;
    }
  }
  return true;
}

// A stored value and the optimizer's index of its parameter.
struct Entry {
  NDArray stored;
  int index;
};

class InProcessStore final : public StoreBase<Entry> {
 public:
  InProcessStore(std::string_view type, Reduce reduce)
      : StoreBase(std::string(type)), reduce_(reduce) {}

  void init(const Key& key, const NDArray& value) override {
    check_new_key(key, value);
    autograd::PauseScope pause;
    const int64_t index = key.is_int() ? key.as_int() : static_cast<int64_t>(entries_.size());
    JANUS_CHECK(index >= 0 && index <= INT32_MAX, ValueError,
                "kvstore '{}': init: key {} is negative or too large, expected 0..2^31-1", type(),
                key.to_string());
    entries_.emplace(key, Entry{copyto(value, value.device()), static_cast<int>(index)});
  }

  void push(const Key& key, std::span<const NDArray> values, int priority) override {
    Entry& e = entry(key, "push");
    check_arrays(key, "push", "value", e.stored.shape(), e.stored.dtype(), values);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    if (!optimizer_ && ring(values)) {
      parallel::ring_reduce_into(e.stored, values);  // the sum straight into the stored value
      return;
    }
    apply(e, reduce(e, values));
  }

  void pull(const Key& key, std::span<const NDArray> outs, int priority) override {
    Entry& e = entry(key, "pull");
    check_arrays(key, "pull", "output", e.stored.shape(), e.stored.dtype(), outs);
    const ops::ScopedPriority scope(priority);
    parallel::broadcast_into(e.stored, outs);
  }

  bool sums_on_the_devices() const override { return reduce_ == Reduce::kRing && !optimizer_; }

  void pushpull(const Key& key, std::span<const NDArray> values, std::span<const NDArray> outs,
                int priority) override {
    Entry& e = entry(key, "pushpull");
    check_arrays(key, "pushpull", "value", e.stored.shape(), e.stored.dtype(), values);
    check_arrays(key, "pushpull", "output", e.stored.shape(), e.stored.dtype(), outs);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    if (optimizer_) {
      apply(e, reduce(e, values));
      parallel::broadcast_into(e.stored, outs);
      return;
    }
    // An allreduce. In place, the hot path of data-parallel training, the ring leaves the sum
    // in every value, which are the outputs.
    if (in_place(values, outs) && ring(values)) {
      parallel::ring_allreduce(values);
      return;
    }
    parallel::broadcast_into(reduce(e, values), outs);
  }

 private:
  bool ring(std::span<const NDArray> values) const {
    return reduce_ == Reduce::kRing && values.size() > 1 && distinct_devices(values);
  }

  static bool in_place(std::span<const NDArray> values, std::span<const NDArray> outs) {
    if (values.size() != outs.size()) return false;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!parallel::same_view(values[i], outs[i])) return false;
    }
    return true;
  }

  // The sum of `values`, on the stored value's device.
  NDArray reduce(const Entry& e, std::span<const NDArray> values) const {
    const Device home = e.stored.device();
    NDArray sum = empty(e.stored.shape(), e.stored.dtype(), home);
    if (ring(values)) {
      // Each device sums a chunk; no copy of the values, no all-gather into N of them.
      parallel::ring_reduce_into(sum, values);
    } else {
      parallel::reduce_into(sum, values);
    }
    return sum;
  }

  // The stored value from a pushed sum: updated by the optimizer, or replaced.
  void apply(Entry& e, const NDArray& sum) {
    if (optimizer_) {
      optimizer_->update(e.index, e.stored, sum);
    } else {
      copy_into(e.stored, sum);
    }
  }

  Reduce reduce_;
};

const bool kRegistered = [] {
  register_kind("local",
                [] { return std::make_shared<InProcessStore>("local", Reduce::kOnStore); });
  register_kind("device", [] { return std::make_shared<InProcessStore>("device", Reduce::kRing); });
  return true;
}();

}  // namespace
}  // namespace janus::kvstore
