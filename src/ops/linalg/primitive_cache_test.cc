// The primitive cache: one value per key, built once even when many threads ask at once, at a
// stable address; a new implementation is run once on a value of its own; and the kernels
// that use the cache (dot, fully_connected, conv2d) share it by their typed keys.
#include "primitive_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <compare>
#include <string>
#include <thread>
#include <vector>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

namespace janus::ops {
namespace {

struct TestKey {
  int64_t rows, cols;
  auto operator<=>(const TestKey&) const = default;
};

std::atomic<int> g_built{0};

// A value whose "implementation" depends on the key's parity, as a oneDNN primitive's depends
// on its shape (and on `cols`, so that each test sees implementations of its own).
struct TestValue {
  explicit TestValue(const TestKey& key) : key(key), built_threads(omp_get_max_threads()) {
    ++g_built;
  }
  std::string impl() const {
    return fmt::format("primitive_cache_test:{}:{}", key.rows % 2 == 0 ? "even" : "odd", key.cols);
  }
  TestKey key;
  int built_threads;  // the OpenMP thread count it was built under, as a oneDNN primitive's
};

TEST(PrimitiveCache, BuildsEachKeyOnceAndRunsEachNewImplementationOnce) {
  PrimitiveCache<TestKey, TestValue> cache;
  g_built = 0;
  int probes = 0;
  auto probe = [&probes](const TestValue&) { ++probes; };
  const TestValue& a = cache.get({2, 3}, probe);
  EXPECT_EQ(g_built.load(), 2);  // the cached value and the probe's own
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(&cache.get({2, 3}, probe), &a);  // the same value, not rebuilt
  EXPECT_EQ(g_built.load(), 2);
  const TestValue& b = cache.get({4, 3}, probe);  // a new key, an implementation seen before
  EXPECT_NE(&b, &a);
  EXPECT_EQ(b.key, (TestKey{4, 3}));
  EXPECT_EQ(g_built.load(), 3);
  EXPECT_EQ(probes, 1);
  cache.get({1, 3}, probe);  // a new implementation
  EXPECT_EQ(probes, 2);
  EXPECT_EQ(cache.size(), 3u);
}

// oneDNN fixes a primitive's threads when it is built: a value built under one OpenMP thread (a
// device of one core) is never handed to a caller of two, which gets one built under two.
TEST(PrimitiveCache, KeysValuesByTheCallersThreadCount) {
  PrimitiveCache<TestKey, TestValue> cache;
  auto probe = [](const TestValue&) {};
  const TestValue* one = nullptr;
  const TestValue* two = nullptr;
  {
    const ScopedOmpThreads threads(1);
    one = &cache.get({6, 5}, probe);
  }
  {
    const ScopedOmpThreads threads(2);
    two = &cache.get({6, 5}, probe);
    EXPECT_EQ(&cache.get({6, 5}, probe), two);
  }
  EXPECT_NE(one, two);
  EXPECT_EQ(one->built_threads, 1);
  EXPECT_EQ(two->built_threads, 2);
  EXPECT_EQ(cache.size(), 2u);
  const ScopedOmpThreads threads(1);
  EXPECT_EQ(&cache.get({6, 5}, probe), one);
}

TEST(PrimitiveCache, ConcurrentCallersGetOneValue) {
  PrimitiveCache<TestKey, TestValue> cache;
  std::vector<const TestValue*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&cache, &seen, t] {
      for (int64_t k = 0; k < 50; ++k) {
        const TestValue& v = cache.get({k, 7}, [](const TestValue&) {});
        if (k == 49) seen[t] = &v;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cache.size(), 50u);
  for (const TestValue* v : seen) EXPECT_EQ(v, seen[0]);
}

using TestCache = PrimitiveCache<TestKey, TestValue>;

TEST(PrimitiveCache, TheProcessCacheIsOnePerKeyAndValueType) {
  TestCache& cache = primitive_cache<TestKey, TestValue>();
  EXPECT_EQ(&cache, &(primitive_cache<TestKey, TestValue>()));
  cache.get({10, 1}, [](const TestValue&) {});
  EXPECT_EQ(cache.size(), 1u);
}

// The oneDNN kernels go through the cache: results stay right when a shape's primitive is
// reused (fully_connected's relu is applied after the primitive, so both activations use one).
TEST(PrimitiveCache, KernelsReuseTheirPrimitives) {
  const NDArray x = from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3});
  const NDArray w = from_vector<float>({1, 1, 1, -1, 0, 1}, {2, 3});
  const NDArray b = from_vector<float>({0, 0}, {2});
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(to_vector<float>(dot(x, w, false, true)), (std::vector<float>{2, 2, -5, -2}));
    static const OpDef& fc = get_op("fully_connected");
    EXPECT_EQ(to_vector<float>(invoke(fc, {x, w, b}, {std::string("")})[0]),
              (std::vector<float>{2, 2, -5, -2}));
    EXPECT_EQ(to_vector<float>(invoke(fc, {x, w, b}, {std::string("relu")})[0]),
              (std::vector<float>{2, 2, 0, 0}));
  }
}

}  // namespace
}  // namespace janus::ops
