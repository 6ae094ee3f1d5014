// The compiled-graph cache: keyed by every input's shape, dtype and device and the training
// mode; least recently used evicted first.
#include "janus/graph/graph_cache.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"

namespace janus::graph {
namespace {

// Two logical CPU devices while alive; the count is restored after every array is released.
struct TwoCpuDevices {
  int saved = num_cpu_devices();
  TwoCpuDevices() { set_num_cpu_devices(std::max(saved, 2)); }
  ~TwoCpuDevices() {
    wait_all();  // the test's arrays are gone: release cpu(1) memory while cpu(1) exists
    set_num_cpu_devices(saved);
  }
};

InputSignature sig_of(std::vector<NDArray> xs, bool training = false) {
  return InputSignature::of(xs, training);
}

TEST(GraphCache, KeysOnShapeDTypeDeviceAndTrainingMode) {
  const TwoCpuDevices devices;
  GraphCache<int> cache;
  const NDArray a = zeros({2, 3});
  cache.insert(sig_of({a}), std::make_shared<int>(1));
  EXPECT_NE(cache.find(sig_of({zeros({2, 3})})), nullptr);
  EXPECT_EQ(cache.find(sig_of({zeros({3, 3})})), nullptr);
  EXPECT_EQ(cache.find(sig_of({zeros({2, 3}, DType::kFloat64)})), nullptr);
  EXPECT_EQ(cache.find(sig_of({zeros({2, 3}, DType::kFloat32, cpu(1))})), nullptr);
  EXPECT_EQ(cache.find(sig_of({a}, /*training=*/true)), nullptr);
  EXPECT_EQ(cache.find(sig_of({a, a})), nullptr);
  EXPECT_EQ(sig_of({a, a}, true).to_string(),
            "[2, 3] float32 on cpu(0); [2, 3] float32 on cpu(0), training");
}

TEST(GraphCache, EvictsTheLeastRecentlyUsedAndCountsCompilations) {
  GraphCache<int> cache(/*capacity=*/2);
  const auto s1 = sig_of({zeros({1})}), s2 = sig_of({zeros({2})}), s3 = sig_of({zeros({3})});
  const std::shared_ptr<int> one = cache.insert(s1, std::make_shared<int>(1));
  cache.insert(s2, std::make_shared<int>(2));
  ASSERT_NE(cache.find(s1), nullptr);  // now s2 is the least recently used
  cache.insert(s3, std::make_shared<int>(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.find(s2), nullptr);
  EXPECT_EQ(*cache.find(s1), 1);
  EXPECT_EQ(*cache.find(s3), 3);
  EXPECT_EQ(cache.compilations(), 3);
  cache.clear();
  EXPECT_TRUE(cache.empty());
  EXPECT_EQ(*one, 1);  // a value that a caller holds outlives its eviction
  EXPECT_EQ(cache.compilations(), 3);
}

}  // namespace
}  // namespace janus::graph
