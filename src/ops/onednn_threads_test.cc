// The oneDNN-backed operators start OpenMP threads only on the engine's compute worker. A team
// started on the caller's thread (by preparing a primitive there) would stay for the life of
// the process beside the worker's; with more OpenMP threads than cores libgomp's barriers
// sleep at once, and every parallel kernel after that runs slower (a 256x784x256 product:
// 1.2-1.5 ms instead of 0.7 ms on two cores).
#include <gtest/gtest.h>

#include <filesystem>

#include "janus/engine/array.h"
#include "janus/ops/nn.h"
#include "janus/ops/ops.h"

namespace janus {
namespace {

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(OneDnnThreads, PreparingPrimitivesStartsNoThreadsOnTheCaller) {
  // The compute worker and its OpenMP team exist first (a product large enough to be split).
  wait_to_read(dot(ones({256, 256}), ones({256, 256})));
  const int before = thread_count();
  // New shapes: each builds a primitive and runs it once on this thread (settle_onednn_state).
  const NDArray y = fully_connected(ones({67, 389}), ones({71, 389}), zeros({71}));
  const NDArray z = dot(ones({97, 301}), ones({301, 83}));
  const NDArray c = conv2d(ones({8, 3, 17, 17}), ones({5, 3, 3, 3}), zeros({5}), {1, 1}, {1, 1});
  wait_all();
  EXPECT_EQ(y.shape(), Shape({67, 71}));
  EXPECT_EQ(thread_count(), before);
}

}  // namespace
}  // namespace janus
