// The oneDNN-backed operators start OpenMP threads only on the engine's compute worker. A team
// started on the caller's thread (by preparing a primitive there) would stay for the life of
// the process beside the worker's; with more OpenMP threads than cores libgomp's barriers
// sleep at once, and every parallel kernel after that runs slower.
#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>

#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/nn.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

namespace janus {
namespace {

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
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

// A convolution too small to split (fewer multiply-adds than kParallelGemmMacs: LeNet's at
// batch 1) runs on one thread, forward and backward, so a compute worker that only ever runs
// such convolutions never starts a second OpenMP thread; a large one does. OpenMP keeps a team
// per thread that starts one, so a new engine gives a compute worker without one.
TEST(OneDnnThreads, ASmallConvolutionRunsOnOneThread) {
  if (engine().kernel_threads(cpu()) < 2) GTEST_SKIP() << "needs a compute worker of 2 threads";
  set_engine(EngineKind::kThreaded);
  wait_to_read(ones({1}) + ones({1}));  // the new worker exists
  // The old worker's team threads end after it does, detached: wait until the count settles.
  int before = thread_count();
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const int now = thread_count();
    if (now == before) break;
    before = now;
  }
  for (const auto& [x, w] : {std::pair{ones({1, 1, 28, 28}), ones({6, 1, 5, 5})},
                             std::pair{ones({1, 6, 12, 12}), ones({16, 6, 5, 5})}}) {
    const NDArray y = conv2d(x, w, zeros({w.shape()[0]}));
    wait_to_read(conv2d_backward_data(y, w, {x.shape()[2], x.shape()[3]}));
    wait_to_read(conv2d_backward_weight(x, y, {5, 5}));
  }
  EXPECT_EQ(thread_count(), before);
  wait_to_read(conv2d(ones({64, 6, 12, 12}), ones({16, 6, 5, 5}), zeros({16})));
  EXPECT_EQ(thread_count(), before + 1);  // the worker's team thread
}

// prepare runs with the kernel's thread count (oneDNN fixes a primitive's threads when it is
// built: a primitive built for one thread runs on one core), and the caller's own count is
// restored afterwards.
TEST(OneDnnThreads, PrepareSeesTheKernelsThreadsAndRestoresTheCallers) {
  static int seen = 0;
  static ops::OpDef def = [] {
    ops::OpDef d;
    d.name = "onednn_threads_test_probe";
    d.doc = "records omp_get_max_threads() in prepare";
    d.inputs = {"x"};
    d.outputs = {"y"};
    d.infer = [](const ops::InferArgs& args) {
      return std::vector<ops::TensorSpec>(args.inputs.begin(), args.inputs.end());
    };
    d.kernels = {{DeviceType::kCPU, [](const ops::KernelArgs&) {}}};
    d.prepare = [](const ops::InferArgs&, std::span<const ops::TensorSpec>) {
      seen = omp_get_max_threads();
    };
    d.not_differentiable = true;
    return d;
  }();
  static const ops::OpDef& op = ops::register_op(def);
  const int callers = omp_get_max_threads();
  omp_set_num_threads(callers + 3);  // differs from the kernel's
  ops::invoke(op, {ones({2})});
  EXPECT_EQ(seen, engine().kernel_threads(cpu()));
  EXPECT_EQ(omp_get_max_threads(), callers + 3);
  omp_set_num_threads(callers);
  wait_all();
}

}  // namespace
}  // namespace janus
