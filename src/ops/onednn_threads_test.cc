// The oneDNN-backed operators start OpenMP threads only on the engine's compute worker. A team
// started on the caller's thread (by preparing a primitive there) would stay for the life of
// the process beside the worker's; with more OpenMP threads than cores libgomp's barriers
// sleep at once, and every parallel kernel after that runs slower.
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>

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
