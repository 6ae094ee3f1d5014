// The `dist_allreduce` store: no servers; every worker holds every key, and a push sums the
// workers' values hierarchically: across this process's devices (parallel/allreduce.h), then
// across processes (dist::allreduce, Gloo's ring), then back to the local devices.
#include "janus/optim/kvstore.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/dist/collectives.h"
#include "janus/dist/process_group.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"
#include "janus/parallel/allreduce.h"

namespace janus::dist {
namespace {

using kvstore::Key;

bool in_place(std::span<const NDArray> values, std::span<const NDArray> outs) {
  if (values.size() != outs.size()) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!parallel::same_view(values[i], outs[i])) return false;
  }
  return true;
}

// A stored value and the optimizer's index of its parameter.
struct Entry {
  NDArray stored;
  int index;
};

class AllreduceStore final : public kvstore::StoreBase<Entry> {
 public:
  explicit AllreduceStore(ProcessGroup& pg) : StoreBase("dist_allreduce"), pg_(pg) {}

  int rank() const override { return pg_.rank(); }
  int num_workers() const override { return pg_.size(); }

  /// Every worker starts from rank 0's value.
  void init(const Key& key, const NDArray& value) override {
    check_new_key(key, value);
    autograd::PauseScope pause;
    const int64_t index = key.is_int() ? key.as_int() : static_cast<int64_t>(entries_.size());
    NDArray stored = copyto(value, value.device());
    dist::broadcast(pg_, stored, /*root=*/0);
    entries_.emplace(key, Entry{stored, static_cast<int>(index)});
  }

  void push(const Key& key, std::span<const NDArray> values, int priority) override {
    Entry& e = entry(key, "push");
    check_arrays(key, "push", "value", e.stored.shape(), e.stored.dtype(), values);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    NDArray sum = empty(e.stored.shape(), e.stored.dtype(), e.stored.device());
    parallel::reduce_into(sum, values);
    dist::allreduce(pg_, sum);
    apply(e, sum);
  }

  void pull(const Key& key, std::span<const NDArray> outs, int priority) override {
    Entry& e = entry(key, "pull");
    check_arrays(key, "pull", "output", e.stored.shape(), e.stored.dtype(), outs);
    const ops::ScopedPriority scope(priority);
    parallel::broadcast_into(e.stored, outs);
  }

  void pushpull(const Key& key, std::span<const NDArray> values, std::span<const NDArray> outs,
                int priority) override {
    Entry& e = entry(key, "pushpull");
    check_arrays(key, "pushpull", "value", e.stored.shape(), e.stored.dtype(), values);
    check_arrays(key, "pushpull", "output", e.stored.shape(), e.stored.dtype(), outs);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    // Hierarchical: the local sum (into the first value itself when summing in place, the hot
    // path of data-parallel training), then across processes, then back to every device.
    NDArray sum = values[0];
    if (!in_place(values, outs)) {
      sum = empty(e.stored.shape(), e.stored.dtype(), values[0].device());
      parallel::reduce_into(sum, values);
    } else if (values.size() > 1) {
      parallel::reduce_into(sum, values);
    }
    dist::allreduce(pg_, sum);
    if (optimizer_) {
      apply(e, sum);
      parallel::broadcast_into(e.stored, outs);
      return;
    }
    // An allreduce: the stored value stays (KVStore::pushpull), so the training path copies
    // nothing into the store; it copied the sum there each step, a copy-lane operation that
    // woke the copy worker and that the next step's gather into `sum` waited for.
    parallel::broadcast_into(sum, outs);
  }

 private:
  // The stored value from the summed push: updated by the optimizer, or replaced.
  void apply(Entry& e, const NDArray& sum) {
    if (optimizer_) {
      optimizer_->update(e.index, e.stored, sum);
    } else {
      copy_into(e.stored, sum);
    }
  }

  ProcessGroup& pg_;
};

const bool kRegistered = [] {
  kvstore::register_kind("dist_allreduce",
                         [] { return std::make_shared<AllreduceStore>(default_group()); });
  return true;
}();

}  // namespace
}  // namespace janus::dist
