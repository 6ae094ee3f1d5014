// OneDnnBindings: a cached primitive's memory objects are reused run after run, and runs on
// several threads at once each compute with their own pointers.
#include "onednn.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace janus::ops {
namespace {

// y [rows, 3] = x [rows, 2] · w [2, 3], as one oneDNN matmul with its bindings.
struct Product {
  static constexpr int64_t kRows = 4;
  Product()
      : pd(dnnl::matmul::desc(md({kRows, 2}), md({2, 3}), md({kRows, 3})), onednn_attr(),
           onednn_engine()),
        prim(pd),
        bindings({{DNNL_ARG_SRC, md({kRows, 2})},
                  {DNNL_ARG_WEIGHTS, md({2, 3})},
                  {DNNL_ARG_DST, md({kRows, 3})}},
                 pd.scratchpad_desc()) {}
  static dnnl::memory::desc md(const dnnl::memory::dims& dims) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  }
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  OneDnnBindings bindings;
};

// x = s * [[1, 2], [3, 4], [5, 6], [7, 8]], w = [[1, 0, 1], [0, 1, 1]]: y = s * [a, b, a + b].
std::vector<float> run_scaled(const Product& p, float s) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, w = {1, 0, 1, 0, 1, 1}, y(12, -1.0f);
  for (float& v : x) v *= s;
  p.bindings.run(p.prim, {x.data(), w.data(), y.data()});
  return y;
}

std::vector<float> expected_scaled(float s) {
  std::vector<float> y;
  for (float a = 1; a < 8; a += 2) {
    for (float v : {a, a + 1, 2 * a + 1}) y.push_back(s * v);
  }
  return y;
}

TEST(OneDnnBindings, EachRunComputesWithItsOwnPointers) {
  const Product p;
  for (float s : {1.0f, -2.0f, 0.5f}) EXPECT_EQ(run_scaled(p, s), expected_scaled(s));
}

// Two leases at once (two runs in flight): binding the second leaves the first's pointers.
TEST(OneDnnBindings, LeasesHeldAtOnceHaveTheirOwnMemoryObjects) {
  const Product p;
  std::vector<float> x1 = {1, 2, 3, 4, 5, 6, 7, 8}, x2(8, 0.0f), w = {1, 0, 1, 0, 1, 1};
  std::vector<float> y1(12, -1.0f), y2(12, -1.0f);
  {
    OneDnnBindings::Lease first = p.bindings.lease();
    OneDnnBindings::Lease second = p.bindings.lease();
    first.bind({x1.data(), w.data(), y1.data()});
    second.bind({x2.data(), w.data(), y2.data()});
    first.execute(p.prim);
    second.execute(p.prim);
  }
  EXPECT_EQ(y1, expected_scaled(1.0f));
  EXPECT_EQ(y2, std::vector<float>(12, 0.0f));
  // Both sets are back in the pool and still right.
  EXPECT_EQ(run_scaled(p, 3.0f), expected_scaled(3.0f));
}

TEST(OneDnnBindings, ConcurrentRunsComputeWithTheirOwnPointers) {
  const Product p;
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([&p, &wrong, t] {
      const ScopedOmpThreads one_thread(1);
      for (int i = 0; i < 200; ++i) {
        const float s = static_cast<float>(t * 1000 + static_cast<size_t>(i));
        if (run_scaled(p, s) != expected_scaled(s)) ++wrong[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace janus::ops
