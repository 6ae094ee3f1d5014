// KVStore: the store through which replicas of parameters on several devices (and, in the dist
// layer, several processes) exchange gradients and weights (Gluon's mx.kv). Layer: optim holds
// the interface, which Trainer drives; the stores live below: `local` and `device` in parallel,
// the dist_* kinds in dist. Each registers itself under its name.
//
//   auto kv = kvstore::create("device");
//   kv->init(3, zeros({256, 784}));
//   kv->push(3, {g0, g1});           // g0 on cpu(0), g1 on cpu(1): summed
//   kv->pull(3, {w0, w1});           // the stored value copied into both
//   kv->pushpull(3, {g0, g1}, {g0, g1});  // allreduce in place; the stored value stays
//
// Every call is asynchronous: it pushes engine operations ordered by the arrays' vars and
// returns; `priority` (higher first) lets the values needed first go first. Arrays passed in
// must not change until those operations ran, which the engine's ordering already ensures for
// later operations on them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/optim/optimizer.h"

namespace janus::kvstore {

/// A key: an integer or a string (one store takes keys of one kind, as MXNet's does).
class Key {
 public:
  Key(int key) : key_(static_cast<int64_t>(key)) {}  // NOLINT(google-explicit-constructor)
  Key(int64_t key) : key_(key) {}                    // NOLINT(google-explicit-constructor)
  Key(std::string key) : key_(std::move(key)) {}     // NOLINT(google-explicit-constructor)
  Key(const char* key) : key_(std::string(key)) {}   // NOLINT(google-explicit-constructor)

  bool is_int() const { return std::holds_alternative<int64_t>(key_); }
  int64_t as_int() const { return std::get<int64_t>(key_); }
  const std::string& as_string() const { return std::get<std::string>(key_); }
  /// "3" or "'fc1.weight'", for messages.
  std::string to_string() const;
  friend bool operator==(const Key&, const Key&) = default;
  friend auto operator<=>(const Key&, const Key&) = default;

 private:
  std::variant<int64_t, std::string> key_;
};

class KVStore {
 public:
  virtual ~KVStore() = default;

  /// The name create() takes: "local", "device", "dist_sync", ...
  virtual std::string_view type() const = 0;
  /// This process's rank among the workers of the job, and their number (1 in one process).
  virtual int rank() const { return 0; }
  virtual int num_workers() const { return 1; }

  /// Stores a copy of `value` under `key`. A key initialised twice is a ValueError naming it.
  virtual void init(const Key& key, const NDArray& value) = 0;
  /// Sums `values` (of the stored shape and dtype; on any devices) and, with an optimizer set,
  /// updates the stored value from the sum as a gradient; without one, the sum replaces it.
  virtual void push(const Key& key, std::span<const NDArray> values, int priority = 0) = 0;
  /// Copies the stored value into every array of `outs`.
  virtual void pull(const Key& key, std::span<const NDArray> outs, int priority = 0) = 0;
  /// With an optimizer set: push then pull. Without one, an allreduce: `outs` receive the sum
  /// of `values`, and the stored value stays as it was (as in MXNet's allreduce stores,
  /// Horovod's and BytePS's; the training path then copies nothing into the store). `outs` may
  /// be `values` themselves (in place).
  virtual void pushpull(const Key& key, std::span<const NDArray> values,
                        std::span<const NDArray> outs, int priority = 0) = 0;
  /// init(key, value) then pull(key, outs).
  virtual void broadcast(const Key& key, const NDArray& value, std::span<const NDArray> outs,
                         int priority = 0) = 0;
  /// Updates on the store: each push is applied to the stored value as a gradient by
  /// `optimizer` (Gluon's update_on_kvstore). Null removes it.
  virtual void set_optimizer(optim::OptimizerPtr optimizer) = 0;
  virtual const optim::OptimizerPtr& optimizer() const = 0;
  /// True when pushpull, as things stand (no optimizer set here), only sums the values where
  /// they are, across the pushing devices of this process (the `device` store): a caller that
  /// holds every device's values may then compute the sum itself, in operations of its own on
  /// those devices, with the same result (Trainer::step fuses it into the updates).
  virtual bool sums_on_the_devices() const { return false; }
  /// True when the state of the optimizer set here (momentum, Adam's moments) lives outside
  /// this process (on parameter servers), where Trainer::save_states cannot read it.
  virtual bool keeps_optimizer_state_elsewhere() const { return false; }

  /// One key's optimizer state: its arrays (in Optimizer::state_names() order, of the key's
  /// shape and dtype; empty before its first update) and its update count.
  struct OptimizerState {
    std::vector<NDArray> arrays;
    int64_t update_count = 0;
  };
  /// Where the store keeps the optimizer's state (keeps_optimizer_state_elsewhere): gathers the
  /// state of `key` into this process (on the CPU), reassembling a key split across servers.
  /// Nothing is kept elsewhere by default: an empty state.
  virtual OptimizerState pull_optimizer_state(const Key& key) {
    static_cast<void>(key);
    return {};
  }
  /// The converse (resuming from a checkpoint): `state` replaces the state of `key` where the
  /// store keeps it. Every worker may call it with the same state; the store takes worker 0's
  /// (it orders it before worker 0's next push of the key). Nothing to do by default.
  virtual void push_optimizer_state(const Key& key, const OptimizerState& state) {
    static_cast<void>(key);
    static_cast<void>(state);
  }

  // List forms: keys[i] with values[i] (and outs[i]).
  void init(std::span<const Key> keys, std::span<const NDArray> values);
  void push(std::span<const Key> keys, std::span<const std::vector<NDArray>> values,
            int priority = 0);
  void pull(std::span<const Key> keys, std::span<const std::vector<NDArray>> outs,
            int priority = 0);
  void pushpull(std::span<const Key> keys, std::span<const std::vector<NDArray>> values,
                std::span<const std::vector<NDArray>> outs, int priority = 0);

  // One array each, for brevity.
  void push(const Key& key, const NDArray& value, int priority = 0) {
    push(key, std::span<const NDArray>(&value, 1), priority);
  }
  void pull(const Key& key, const NDArray& out, int priority = 0) {
    pull(key, std::span<const NDArray>(&out, 1), priority);
  }
};

namespace detail {
// StoreBase's checks, one definition for every Entry.
void check_key_kind(std::string_view type, std::optional<bool>& int_keys, const Key& key,
                    std::string_view what);
[[noreturn]] void throw_key_error(std::string_view type, std::string_view what, const Key& key,
                                  bool initialised);
void check_value_defined(std::string_view type, const Key& key, const NDArray& value);
void check_arrays(std::string_view type, const Key& key, std::string_view what,
                  std::string_view role, const Shape& shape, DType dtype,
                  std::span<const NDArray> arrays);
}  // namespace detail

/// What every store kind shares: its name, keys of one kind (integers or strings, as MXNet's),
/// its entries by key and their lookup, the checks of the arrays passed in, broadcast as init
/// then pull, and the optimizer. `Entry` is the kind's record of one key.
template <class Entry>
class StoreBase : public KVStore {
 public:
  std::string_view type() const override { return type_; }
  void broadcast(const Key& key, const NDArray& value, std::span<const NDArray> outs,
                 int priority) override {
    init(key, value);
    pull(key, outs, priority);
  }
  void set_optimizer(optim::OptimizerPtr optimizer) override { optimizer_ = std::move(optimizer); }
  const optim::OptimizerPtr& optimizer() const override { return optimizer_; }

 protected:
  explicit StoreBase(std::string type) : type_(std::move(type)) {}

  /// init's checks: `key` is of this store's kind and not initialised yet, `value` is defined;
  /// a ValueError naming the key otherwise.
  void check_new_key(const Key& key, const NDArray& value) {
    detail::check_key_kind(type_, int_keys_, key, "init");
    if (entries_.contains(key)) detail::throw_key_error(type_, "init", key, /*initialised=*/true);
    detail::check_value_defined(type_, key, value);
  }
  /// The entry of `key`; a ValueError naming the key and `what` when it was never initialised.
  Entry& entry(const Key& key, std::string_view what) {
    auto it = entries_.find(key);
    if (it == entries_.end()) detail::throw_key_error(type_, what, key, /*initialised=*/false);
    return it->second;
  }
  /// `arrays` (the `role`s of `what`: "value", "output") are given, defined and of the key's
  /// shape and dtype; ValueError, ShapeError or TypeError naming the key and the array.
  void check_arrays(const Key& key, std::string_view what, std::string_view role,
                    const Shape& shape, DType dtype, std::span<const NDArray> arrays) const {
    detail::check_arrays(type_, key, what, role, shape, dtype, arrays);
  }

  std::map<Key, Entry> entries_;
  optim::OptimizerPtr optimizer_;

 private:
  std::string type_;
  std::optional<bool> int_keys_;
};

using KVStorePtr = std::shared_ptr<KVStore>;
using Factory = std::function<KVStorePtr()>;

/// The store called `name`; a ValueError listing the known names otherwise.
KVStorePtr create(std::string_view name);
/// Makes `factory` what create(name) calls (a store kind registers itself at start-up).
void register_kind(std::string name, Factory factory);
/// The registered names, sorted.
std::vector<std::string> kinds();

}  // namespace janus::kvstore
