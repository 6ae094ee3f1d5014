// PrimitiveCache: the one cache of built oneDNN primitives, behind every oneDNN-backed kernel
// (matmul and fully_connected, the three convolution passes). Private to src/ops.
#pragma once

#include <omp.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "onednn.h"

namespace janus::ops {

/// Values built from a typed key (a shape or geometry struct with operator<=>), each built once
/// and shared by every thread: building a oneDNN primitive costs far more than running it, and
/// a primitive may execute on several threads at once. Values keep their address and live as
/// long as the cache.
///
/// A value is also keyed by the caller's OpenMP thread count (omp_get_max_threads()), under
/// which it is built: oneDNN fixes a primitive's threads when it is built, so a primitive built
/// for a one-thread worker (a device of one core) runs on one core on any worker. The same
/// shape on a worker of two threads gets a primitive of its own, built for two.
///
/// `Value` is constructible from `const Key&` (it builds its primitive there) and has
/// `std::string impl() const`, oneDNN's name of the implementation it picked
/// (primitive_desc::impl_info_str()). Thread-safe.
template <typename Key, typename Value>
class PrimitiveCache {
 public:
  /// The value for `key`, built as Value(key) on first use. The first time its implementation
  /// is seen in the process, a second Value(key) is built and given to `run_on_zeros`, on this
  /// thread and limited to one OpenMP thread (settle_onednn_state): the first execution of an
  /// implementation creates oneDNN's static state, and a primitive's threads are fixed when it
  /// is built, so the cached value (built for the compute worker's threads, ops::run_prepare)
  /// must not run here. Call it first from an operator's `prepare`.
  template <typename RunOnZeros>
  const Value& get(const Key& key, RunOnZeros run_on_zeros) {
    const std::pair<int, Key> threads_and_key{omp_get_max_threads(), key};
    std::lock_guard lock(mu_);
    auto it = values_.find(threads_and_key);
    if (it != values_.end()) return *it->second;
    const Value& value =
        *values_.emplace(threads_and_key, std::make_unique<Value>(key)).first->second;
    settle_onednn_state(value.impl(), [&] { run_on_zeros(Value(key)); });
    return value;
  }

  /// The number of values built (one per key and thread count).
  size_t size() const {
    std::lock_guard lock(mu_);
    return values_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<int, Key>, std::unique_ptr<Value>> values_;  // by (threads, key)
};

/// The process's cache of `Value`s by `Key` (one per pair of types). Never destroyed: a kernel
/// still running at exit may use its values.
template <typename Key, typename Value>
PrimitiveCache<Key, Value>& primitive_cache() {
  static auto* cache = new PrimitiveCache<Key, Value>();
  return *cache;
}

}  // namespace janus::ops
