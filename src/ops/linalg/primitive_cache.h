// PrimitiveCache: the one cache of built oneDNN primitives, behind every oneDNN-backed kernel
// (matmul and fully_connected, the three convolution passes). Private to src/ops.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "onednn.h"

namespace janus::ops {

/// Values built from a typed key (a shape or geometry struct with operator<=>), each built once
/// and shared by every thread: building a oneDNN primitive costs far more than running it, and
/// a primitive may execute on several threads at once. Values keep their address and live as
/// long as the cache.
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
    std::lock_guard lock(mu_);
    auto it = values_.find(key);
    if (it != values_.end()) return *it->second;
    const Value& value = *values_.emplace(key, std::make_unique<Value>(key)).first->second;
    settle_onednn_state(value.impl(), [&] { run_on_zeros(Value(key)); });
    return value;
  }

  /// The number of values built.
  size_t size() const {
    std::lock_guard lock(mu_);
    return values_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<Key, std::unique_ptr<Value>> values_;
};

/// The process's cache of `Value`s by `Key` (one per pair of types). Never destroyed: a kernel
/// still running at exit may use its values.
template <typename Key, typename Value>
PrimitiveCache<Key, Value>& primitive_cache() {
  static auto* cache = new PrimitiveCache<Key, Value>();
  return *cache;
}

}  // namespace janus::ops
