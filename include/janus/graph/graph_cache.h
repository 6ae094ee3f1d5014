// GraphCache: the compiled graphs of one model, kept per input signature (each input's shape,
// dtype and device, and the training mode). The one compiled-graph cache of Janus: hybridized
// blocks, SymbolBlock and deploy::Predictor all keep theirs here. Layer: graph.
//
//   graph::GraphCache<graph::CachedOp> cache(/*capacity=*/8);
//   const auto sig = graph::InputSignature::of(inputs);
//   std::shared_ptr<graph::CachedOp> op = cache.find(sig);
//   if (!op) op = cache.insert(sig, std::make_shared<graph::CachedOp>(symbol, specs));
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/ops/registry.h"

namespace janus::graph {

/// What a compiled graph is specialised for.
struct InputSignature {
  std::vector<ops::TensorSpec> inputs;  // shape, dtype and device of each input
  bool training = false;

  static InputSignature of(std::span<const NDArray> inputs, bool training = false);
  bool operator==(const InputSignature& o) const;
  /// "[2, 3] float32 on cpu(0), inference"; several inputs are separated by "; ".
  std::string to_string() const;
};

/// Values (compiled graphs and what goes with them) by input signature; beyond `capacity`, the
/// least recently used goes first. Values are shared: one that a caller holds stays valid
/// after its eviction. Not thread-safe (one per model, used by its caller's thread).
template <typename T>
class GraphCache {
 public:
  explicit GraphCache(size_t capacity = 8) : capacity_(capacity < 1 ? 1 : capacity) {}

  /// The value for `sig`, now the most recently used; null when there is none.
  std::shared_ptr<T> find(const InputSignature& sig) {
    for (Item& item : items_) {
      if (item.sig == sig) {
        item.last_used = ++clock_;
        return item.value;
      }
    }
    return nullptr;
  }
  /// Stores `value` for `sig` (which must not be cached yet), evicting the least recently used
  /// value when the cache is full. Counts as a compilation.
  std::shared_ptr<T> insert(InputSignature sig, std::shared_ptr<T> value) {
    while (items_.size() >= capacity_) evict_least_recently_used();
    items_.push_back({std::move(sig), value, ++clock_});
    ++compilations_;
    return value;
  }
  /// Drops every value (a later find compiles again); keeps the count of compilations.
  void clear() { items_.clear(); }
  void set_capacity(size_t capacity) {
    capacity_ = capacity < 1 ? 1 : capacity;
    while (items_.size() > capacity_) evict_least_recently_used();
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// Values inserted so far (graphs compiled), evicted ones included.
  int64_t compilations() const { return compilations_; }

 private:
  void evict_least_recently_used() {
    auto oldest = items_.begin();
    for (auto it = items_.begin(); it != items_.end(); ++it) {
      if (it->last_used < oldest->last_used) oldest = it;
    }
    items_.erase(oldest);
  }

  struct Item {
    InputSignature sig;
    std::shared_ptr<T> value;
    uint64_t last_used = 0;
  };
  std::vector<Item> items_;
  size_t capacity_;
  uint64_t clock_ = 0;
  int64_t compilations_ = 0;
};

}  // namespace janus::graph
