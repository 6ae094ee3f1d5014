// The CPU device type: how the engine's workers of a logical CPU device are set up.
#include "device_cpu.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <vector>

#include "janus/base/omp_threads.h"

namespace janus {
namespace {

// A kernel's work is done when it returns. The stream holds the worker's OpenMP team size for
// as long as the worker runs.
class CpuStream final : public Stream {
 public:
  explicit CpuStream(int threads) : team_(threads) {}
  void synchronize() override {}

 private:
  // Intra-op threads (OpenMP, and oneDNN on top of it) never exceed the device's share.
  const ScopedOmpThreads team_;
};

class CpuBackend final : public DeviceBackend {
 public:
  int count() const override { return num_cpu_devices(); }

  LaneWorkers lane_workers(Device device, Lane lane, int requested) const override {
    // The device's share of cores per compute worker, capped by OMP_NUM_THREADS when the user
    // set it. Copy and comm kernels run single-threaded.
    const int workers = std::max(1, requested);
    const int cores = static_cast<int>(device_cores(device).size());
    const int share = std::max(1, cores / workers);
    const int threads = lane == Lane::kCompute ? std::min(share, omp_get_max_threads()) : 1;
    return LaneWorkers{workers, threads};
  }

  std::unique_ptr<Stream> start_worker(Device device, Lane lane, const LaneWorkers& plan) override {
    // Every worker sets its affinity explicitly: a thread inherits its creator's, and the
    // engine starts a lane's workers lazily on whichever thread first dispatches to it, often
    // another device's compute worker. A compute worker is pinned to its device's cores: the
    // device owns that share of the machine. A copy or comm worker may run on any of the
    // process's cores: its work is memory traffic or waiting, not the device's compute, and it
    // exists to overlap that compute, so it must run where a core is free, which only the OS
    // scheduler knows (another device's core that idles, or one that another process leaves).
    // Pinned to its destination device's cores, as it once was, a copy to cpu(0) shared
    // cpu(0)'s core with whatever ran there (another process's thread, at a load of 3 on 2
    // cores) while cpu(1)'s core idled between the compute it was meant to overlap, and the
    // overlap came and went with where the OS had put that other thread.
    const std::vector<int> cores =
        lane == Lane::kCompute ? device_cores(device) : hardware_core_ids();
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cores) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    return std::make_unique<CpuStream>(plan.kernel_threads);
  }
};

}  // namespace

DeviceBackend& cpu_device_backend() {
  // Never destroyed, like the engine whose workers use it: a worker may still be starting
  // while the process exits and destroys its statics.
  static auto* backend = new CpuBackend;
  return *backend;
}

}  // namespace janus
