// The KVStore interface's shared parts: keys, the list forms, and the registry of store kinds.
#include "janus/optim/kvstore.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <mutex>

#include "janus/base/error.h"

namespace janus::kvstore {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, Factory, std::less<>> factories;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: kinds register from static init
  return *r;
}

void check_lists(std::string_view what, size_t keys, size_t values, std::string_view of) {
  JANUS_CHECK(keys == values, ValueError,
              "kvstore: {}: {} keys but {} lists of {}, expected one each", what, keys, values, of);
}

}  // namespace

std::string Key::to_string() const {
  return is_int() ? std::to_string(as_int()) : fmt::format("'{}'", as_string());
}

void KVStore::init(std::span<const Key> keys, std::span<const NDArray> values) {
  check_lists("init", keys.size(), values.size(), "values");
  for (size_t i = 0; i < keys.size(); ++i) init(keys[i], values[i]);
}

void KVStore::push(std::span<const Key> keys, std::span<const std::vector<NDArray>> values,
                   int priority) {
  check_lists("push", keys.size(), values.size(), "values");
  for (size_t i = 0; i < keys.size(); ++i) push(keys[i], values[i], priority);
}

void KVStore::pull(std::span<const Key> keys, std::span<const std::vector<NDArray>> outs,
                   int priority) {
  check_lists("pull", keys.size(), outs.size(), "outputs");
  for (size_t i = 0; i < keys.size(); ++i) pull(keys[i], outs[i], priority);
}

void KVStore::pushpull(std::span<const Key> keys, std::span<const std::vector<NDArray>> values,
                       std::span<const std::vector<NDArray>> outs, int priority) {
  check_lists("pushpull", keys.size(), values.size(), "values");
  check_lists("pushpull", keys.size(), outs.size(), "outputs");
  for (size_t i = 0; i < keys.size(); ++i) pushpull(keys[i], values[i], outs[i], priority);
}

namespace detail {

void check_key_kind(std::string_view type, std::optional<bool>& int_keys, const Key& key,
                    std::string_view what) {
  if (!int_keys) int_keys = key.is_int();
  JANUS_CHECK(key.is_int() == *int_keys, ValueError,
              "kvstore '{}': {}: key {} is {}, but this store's keys are {}", type, what,
              key.to_string(), key.is_int() ? "an integer" : "a string",
              *int_keys ? "integers" : "strings");
}

void throw_key_error(std::string_view type, std::string_view what, const Key& key,
                     bool initialised) {
  if (initialised) {
    JANUS_THROW(ValueError, "kvstore '{}': {}: key {} is already initialised (init each key once)",
                type, what, key.to_string());
  }
  JANUS_THROW(ValueError, "kvstore '{}': {}: key {} was never initialised (call init first)", type,
              what, key.to_string());
}

void check_value_defined(std::string_view type, const Key& key, const NDArray& value) {
  JANUS_CHECK(value.defined(), ValueError, "kvstore '{}': init: key {}: the value is undefined",
              type, key.to_string());
}

void check_arrays(std::string_view type, const Key& key, std::string_view what,
                  std::string_view role, const Shape& shape, DType dtype,
                  std::span<const NDArray> arrays) {
  JANUS_CHECK(!arrays.empty(), ValueError, "kvstore '{}': {}: key {}: no {}s given", type, what,
              key.to_string(), role);
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NDArray& a = arrays[i];
    JANUS_CHECK(a.defined(), ValueError, "kvstore '{}': {}: key {}: {} {} is undefined", type, what,
                key.to_string(), role, i);
    JANUS_CHECK(a.shape() == shape, ShapeError,
                "kvstore '{}': {}: key {}: {} {} has shape {}, but the key holds shape {}", type,
                what, key.to_string(), role, i, a.shape(), shape);
    JANUS_CHECK(a.dtype() == dtype, TypeError,
                "kvstore '{}': {}: key {}: {} {} is {}, but the key holds {}", type, what,
                key.to_string(), role, i, a.dtype(), dtype);
  }
}

}  // namespace detail

KVStorePtr create(std::string_view name) {
  Registry& r = registry();
  Factory factory;
  {
    std::lock_guard lock(r.mu);
    auto it = r.factories.find(name);
    if (it != r.factories.end()) factory = it->second;
  }
  JANUS_CHECK(factory != nullptr, ValueError,
              "kvstore::create: unknown kvstore type '{}', expected one of: {}", name,
              fmt::join(kinds(), ", "));
  return factory();
}

void register_kind(std::string name, Factory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  JANUS_CHECK(!r.factories.contains(name), InternalError,
              "kvstore::register_kind: '{}' registered twice", name);
  r.factories.emplace(std::move(name), std::move(factory));
}

std::vector<std::string> kinds() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [name, f] : r.factories) out.push_back(name);
  return out;
}

}  // namespace janus::kvstore
