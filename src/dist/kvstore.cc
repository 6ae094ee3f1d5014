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

bool same_array(const NDArray& a, const NDArray& b) {
  return a.storage() == b.storage() && a.offset_bytes() == b.offset_bytes() &&
         a.shape() == b.shape();
}

bool in_place(std::span<const NDArray> values, std::span<const NDArray> outs) {
  if (values.size() != outs.size()) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_array(values[i], outs[i])) return false;
  }
  return true;
}

class AllreduceStore final : public kvstore::KVStore {
 public:
  explicit AllreduceStore(ProcessGroup& pg) : pg_(pg) {}

  std::string_view type() const override { return "dist_allreduce"; }
  int rank() const override { return pg_.rank(); }
  int num_workers() const override { return pg_.size(); }

  /// Every worker starts from rank 0's value.
  void init(const Key& key, const NDArray& value) override {
    check_kind(key, "init");
    JANUS_CHECK(!entries_.contains(key), ValueError,
                "kvstore 'dist_allreduce': init: key {} is already initialised (init each key "
                "once)",
                key.to_string());
    JANUS_CHECK(value.defined(), ValueError,
                "kvstore 'dist_allreduce': init: key {}: the value is undefined", key.to_string());
    autograd::PauseScope pause;
    const int64_t index = key.is_int() ? key.as_int() : static_cast<int64_t>(entries_.size());
    NDArray stored = copyto(value, value.device());
    dist::broadcast(pg_, stored, /*root=*/0);
    entries_.emplace(key, Entry{stored, static_cast<int>(index)});
  }

  void push(const Key& key, std::span<const NDArray> values, int priority) override {
    Entry& e = entry(key, "push");
    check_arrays(key, "push", "value", e, values);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    NDArray sum = empty(e.stored.shape(), e.stored.dtype(), e.stored.device());
    parallel::reduce_into(sum, values);
    dist::allreduce(pg_, sum);
    apply(e, sum);
  }

  void pull(const Key& key, std::span<const NDArray> outs, int priority) override {
    Entry& e = entry(key, "pull");
    check_arrays(key, "pull", "output", e, outs);
    const ops::ScopedPriority scope(priority);
    parallel::broadcast_into(e.stored, outs);
  }

  void pushpull(const Key& key, std::span<const NDArray> values, std::span<const NDArray> outs,
                int priority) override {
    Entry& e = entry(key, "pushpull");
    check_arrays(key, "pushpull", "value", e, values);
    check_arrays(key, "pushpull", "output", e, outs);
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
    apply(e, sum);
    parallel::broadcast_into(optimizer_ ? e.stored : sum, outs);
  }

  void broadcast(const Key& key, const NDArray& value, std::span<const NDArray> outs,
                 int priority) override {
    init(key, value);
    pull(key, outs, priority);
  }

  void set_optimizer(optim::OptimizerPtr optimizer) override { optimizer_ = std::move(optimizer); }
  const optim::OptimizerPtr& optimizer() const override { return optimizer_; }

 private:
  struct Entry {
    NDArray stored;
    int index;  // the optimizer's parameter index
  };

  void check_kind(const Key& key, std::string_view what) {
    if (!int_keys_) int_keys_ = key.is_int();
    JANUS_CHECK(key.is_int() == *int_keys_, ValueError,
                "kvstore 'dist_allreduce': {}: key {} is {}, but this store's keys are {}", what,
                key.to_string(), key.is_int() ? "an integer" : "a string",
                *int_keys_ ? "integers" : "strings");
  }

  Entry& entry(const Key& key, std::string_view what) {
    auto it = entries_.find(key);
    JANUS_CHECK(it != entries_.end(), ValueError,
                "kvstore 'dist_allreduce': {}: key {} was never initialised (call init first)",
                what, key.to_string());
    return it->second;
  }

  static void check_arrays(const Key& key, std::string_view what, std::string_view role,
                           const Entry& e, std::span<const NDArray> arrays) {
    JANUS_CHECK(!arrays.empty(), ValueError, "kvstore 'dist_allreduce': {}: key {}: no {}s given",
                what, key.to_string(), role);
    for (size_t i = 0; i < arrays.size(); ++i) {
      const NDArray& a = arrays[i];
      JANUS_CHECK(a.defined(), ValueError,
                  "kvstore 'dist_allreduce': {}: key {}: {} {} is undefined", what, key.to_string(),
                  role, i);
      JANUS_CHECK(a.shape() == e.stored.shape(), ShapeError,
                  "kvstore 'dist_allreduce': {}: key {}: {} {} has shape {}, but the key holds "
                  "shape {}",
                  what, key.to_string(), role, i, a.shape(), e.stored.shape());
      JANUS_CHECK(a.dtype() == e.stored.dtype(), TypeError,
                  "kvstore 'dist_allreduce': {}: key {}: {} {} is {}, but the key holds {}", what,
                  key.to_string(), role, i, a.dtype(), e.stored.dtype());
    }
  }

  // The stored value from the summed push: updated by the optimizer, or replaced.
  void apply(Entry& e, const NDArray& sum) {
    if (optimizer_) {
      optimizer_->update(e.index, e.stored, sum);
    } else {
      copy_into(e.stored, sum);
    }
  }

  ProcessGroup& pg_;
  std::map<Key, Entry> entries_;
  std::optional<bool> int_keys_;
  optim::OptimizerPtr optimizer_;
};

const bool kRegistered = [] {
  kvstore::register_kind("dist_allreduce",
                         [] { return std::make_shared<AllreduceStore>(default_group()); });
  return true;
}();

}  // namespace
}  // namespace janus::dist
