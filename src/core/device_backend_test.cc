// Tests of device_backend.h: the registry of device types, the CPU type's workers, and a fake
// type installed in the gpu slot as the CUDA backend will be.
#include "janus/core/device_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "janus/base/error.h"

#include "device_cpu.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

class NullStream final : public Stream {
 public:
  void synchronize() override {}
};

// Three devices, two workers per lane.
class ThreeDeviceBackend final : public DeviceBackend {
 public:
  int count() const override { return 3; }
  LaneWorkers lane_workers(Device, Lane, int) const override { return LaneWorkers{2, 1}; }
  std::unique_ptr<Stream> start_worker(Device, Lane, const LaneWorkers&) override {
    return std::make_unique<NullStream>();
  }
};

// Installs a backend for the gpu type for one test and puts the previous one back.
class ScopedGpuBackend {
 public:
  explicit ScopedGpuBackend(DeviceBackend* backend)
      : saved_(set_device_backend(DeviceType::kGPU, backend)) {}
  ~ScopedGpuBackend() { set_device_backend(DeviceType::kGPU, saved_); }
  ScopedGpuBackend(const ScopedGpuBackend&) = delete;
  ScopedGpuBackend& operator=(const ScopedGpuBackend&) = delete;

 private:
  DeviceBackend* saved_;
};

// The cores the calling thread may run on, in increasing order.
std::vector<int> thread_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  return cores;
}

TEST(DeviceBackend, CpuIsInstalledAndGpuIsNot) {
  DeviceBackend* cpu_backend = device_backend(DeviceType::kCPU);
  ASSERT_NE(cpu_backend, nullptr);
  EXPECT_EQ(cpu_backend->count(), num_cpu_devices());
  EXPECT_EQ(device_backend(DeviceType::kGPU), nullptr);  // no GPU backend in any build yet
  EXPECT_EQ(device_type_name(DeviceType::kCPU), "cpu");
  EXPECT_EQ(device_type_name(DeviceType::kGPU), "gpu");
}

// The plan the engine gets for a CPU lane: the device's share of cores per compute worker
// (capped by OMP_NUM_THREADS), one thread for copies and collectives.
TEST(DeviceBackend, CpuLaneWorkersShareTheDevicesCores) {
  DeviceBackend& backend = *device_backend(DeviceType::kCPU);
  const int cores = static_cast<int>(device_cores(cpu(0)).size());
  for (int requested : {1, 2, 3}) {
    const LaneWorkers compute = backend.lane_workers(cpu(0), Lane::kCompute, requested);
    EXPECT_EQ(compute.workers, requested);
    EXPECT_EQ(compute.kernel_threads,
              std::min(std::max(1, cores / requested), omp_get_max_threads()));
    for (Lane lane : {Lane::kCopy, Lane::kComm}) {
      const LaneWorkers plan = backend.lane_workers(cpu(0), lane, requested);
      EXPECT_EQ(plan.workers, requested);
      EXPECT_EQ(plan.kernel_threads, 1);
    }
  }
  EXPECT_EQ(backend.lane_workers(cpu(0), Lane::kCompute, 0).workers, 1);  // never no worker
  EXPECT_THROW(backend.lane_workers(cpu(num_cpu_devices()), Lane::kCompute, 1), DeviceError);
}

// A CPU worker is pinned to its device's cores (cpu(1) of two: the second share) and its
// OpenMP team is the plan's size while its stream lives.
TEST(DeviceBackend, CpuWorkerIsPinnedAndSizesItsTeam) {
  const int saved_devices = num_cpu_devices();
  set_num_cpu_devices(2);
  DeviceBackend& backend = *device_backend(DeviceType::kCPU);
  const LaneWorkers plan{1, 1};
  std::vector<int> pinned;
  int team = 0, team_after = 0, team_before = 0;
  bool synchronized = false;
  std::thread worker([&] {
    omp_set_num_threads(2);
    team_before = omp_get_max_threads();
    {
      std::unique_ptr<Stream> stream = backend.start_worker(cpu(1), Lane::kCompute, plan);
      pinned = thread_cores();
      team = omp_get_max_threads();
      stream->synchronize();  // nothing to wait for: a CPU kernel's work is done
      synchronized = true;
    }
    team_after = omp_get_max_threads();
  });
  worker.join();
  EXPECT_EQ(pinned, device_cores(cpu(1)));
  set_num_cpu_devices(saved_devices);
  EXPECT_EQ(team, 1);
  EXPECT_EQ(team_after, team_before);
  EXPECT_TRUE(synchronized);
}

// Copy and comm workers are not pinned to their device's share: they may run on any of the
// process's cores, wherever one is free, even when the thread that starts them is pinned to
// another device's core.
TEST(DeviceBackend, CpuCopyAndCommWorkersMayRunOnAnyCore) {
  const int saved_devices = num_cpu_devices();
  set_num_cpu_devices(2);
  DeviceBackend& backend = *device_backend(DeviceType::kCPU);
  std::vector<int> starter, copy, comm;
  std::thread worker([&] {
    std::unique_ptr<Stream> compute = backend.start_worker(cpu(1), Lane::kCompute, {1, 1});
    starter = thread_cores();
    std::thread([&] {
      std::unique_ptr<Stream> stream = backend.start_worker(cpu(0), Lane::kCopy, {1, 1});
      copy = thread_cores();
    }).join();
    std::thread([&] {
      std::unique_ptr<Stream> stream = backend.start_worker(cpu(0), Lane::kComm, {1, 1});
      comm = thread_cores();
    }).join();
  });
  worker.join();
  EXPECT_EQ(starter, device_cores(cpu(1)));
  set_num_cpu_devices(saved_devices);
  EXPECT_EQ(copy, hardware_core_ids());
  EXPECT_EQ(comm, hardware_core_ids());
}

TEST(DeviceBackend, AnInstalledTypeDecidesWhichOfItsDevicesExist) {
  ThreeDeviceBackend three;
  {
    ScopedGpuBackend installed(&three);
    EXPECT_EQ(device_backend(DeviceType::kGPU), &three);
    EXPECT_NO_THROW(check_device(gpu(0), "test"));
    EXPECT_NO_THROW(check_device(gpu(2), "test"));
    try {
      check_device(gpu(3), "engine: push");
      ADD_FAILURE() << "check_device accepted gpu(3) of a type with 3 devices";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr("engine: push: device gpu(3) does not exist: there are 3 gpu devices"));
    }
    EXPECT_NO_THROW(check_devices({gpu(0), gpu(1), cpu(0)}, "replicas"));
  }
  EXPECT_EQ(device_backend(DeviceType::kGPU), nullptr);
  EXPECT_THROW(check_device(gpu(0), "test"), DeviceError);
}

}  // namespace
}  // namespace janus
