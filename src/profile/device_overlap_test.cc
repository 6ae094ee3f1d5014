// Work on two logical CPU devices runs at once, read from the profiler's events (not from a
// timing threshold): some operation of one device overlaps in time some operation of the other.
// Each device's work is several operations of milliseconds each, so on a busy machine the
// devices' workers still run side by side at some point.
#include <gtest/gtest.h>

#include <vector>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/profile/profiler.h"

namespace janus {
namespace {

// Two logical CPU devices on a fresh threaded engine, whose workers start with that split; the
// device count and the engine kind are restored after.
class DeviceOverlap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (hardware_cores() < 2) GTEST_SKIP() << "needs 2 cores, this process has 1";
    saved_kind_ = engine().kind();
    saved_devices_ = num_cpu_devices();
    set_num_cpu_devices(2);
    set_engine(EngineKind::kThreaded, engine_options_from_env());
  }
  void TearDown() override {
    if (hardware_cores() < 2) return;
    wait_all();  // the test's arrays are gone: release cpu(1) memory while cpu(1) exists
    set_num_cpu_devices(saved_devices_);
    set_engine(saved_kind_, engine_options_from_env());
  }

  EngineKind saved_kind_ = EngineKind::kThreaded;
  int saved_devices_ = 1;
};

bool is_compute_on(const profiler::Event& e, Device device) {
  return e.device == device && e.lane == Lane::kCompute && e.name == "dot";
}

bool is_copy_to(const profiler::Event& e, Device device) {
  return e.device == device && e.lane == Lane::kCopy && e.name == "copyto";
}

// Whether some event that `first` accepts and some event that `second` accepts ran at once.
template <typename First, typename Second>
bool any_overlap(const std::vector<profiler::Event>& events, First first, Second second) {
  for (const auto& a : events) {
    if (!first(a)) continue;
    for (const auto& b : events) {
      if (second(b) && a.start_ns < b.end_ns && b.start_ns < a.end_ns) return true;
    }
  }
  return false;
}

TEST_F(DeviceOverlap, IndependentWorkOnTwoDevicesRunsAtOnce) {
  seed(3);
  const NDArray x0 = random_uniform(0, 1, {768, 768}, DType::kFloat32, cpu(0));
  const NDArray x1 = random_uniform(0, 1, {768, 768}, DType::kFloat32, cpu(1));
  wait_to_read(dot(x0, x0));  // warm up both devices (oneDNN primitives, worker teams)
  wait_to_read(dot(x1, x1));
  profiler::start();
  std::vector<NDArray> ys;
  for (int i = 0; i < 10; ++i) ys.push_back(dot(x0, x0));
  for (int i = 0; i < 10; ++i) ys.push_back(dot(x1, x1));
  wait_all();
  profiler::stop();
  const std::vector<profiler::Event> events = profiler::events();
  int on0 = 0, on1 = 0;
  for (const auto& e : events) {
    on0 += is_compute_on(e, cpu(0)) ? 1 : 0;
    on1 += is_compute_on(e, cpu(1)) ? 1 : 0;
  }
  EXPECT_EQ(on0, 10);
  EXPECT_EQ(on1, 10);
  EXPECT_TRUE(any_overlap(
      events, [](const auto& e) { return is_compute_on(e, cpu(0)); },
      [](const auto& e) { return is_compute_on(e, cpu(1)); }))
      << "no dot on cpu(0) ran while one on cpu(1) ran";
}

// The seed's "parallel computation and communication": results computed on cpu(1) are copied to
// cpu(0) on its copy lane while cpu(1) computes the next one. The copy lane runs where a core is
// free; when another process holds the other core through all ten dots (a parallel ctest run),
// no copy overlaps in that run, so the experiment runs up to three times and one overlap
// suffices. An engine that orders the copies after the compute fails every run.
TEST_F(DeviceOverlap, CopiesToADeviceRunWhileAnotherDeviceComputes) {
  seed(4);
  const NDArray x = random_uniform(0, 1, {1536, 512}, DType::kFloat32, cpu(1));
  const NDArray w = random_uniform(0, 1, {512, 512}, DType::kFloat32, cpu(1));
  wait_to_read(copyto(dot(x, w), cpu(0)));  // warm up
  bool overlapped = false;
  for (int run = 0; run < 3 && !overlapped; ++run) {
    profiler::start();
    std::vector<NDArray> copies;
    for (int i = 0; i < 10; ++i) copies.push_back(copyto(dot(x, w), cpu(0)));
    wait_all();
    profiler::stop();
    const std::vector<profiler::Event> events = profiler::events();
    int copied = 0;
    for (const auto& e : events) copied += is_copy_to(e, cpu(0)) ? 1 : 0;
    EXPECT_EQ(copied, 10) << "run " << run;
    overlapped = any_overlap(
        events, [](const auto& e) { return is_copy_to(e, cpu(0)); },
        [](const auto& e) { return is_compute_on(e, cpu(1)); });
  }
  EXPECT_TRUE(overlapped) << "in 3 runs, no copy to cpu(0) ran while a dot on cpu(1) ran";
}

}  // namespace
}  // namespace janus
