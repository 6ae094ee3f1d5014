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
    // Every worker, of any lane, sets its affinity to its device's cores (all the process's
    // cores when there is one device). A thread inherits its creator's affinity, and the engine
    // starts a lane's workers lazily on whichever thread first dispatches to it: often another
    // device's worker, which completed the op's last input. An unpinned copy worker started by
    // cpu(1)'s compute worker stayed on cpu(1)'s core, beside the compute it was meant to
    // overlap, while cpu(0)'s core idled. A copy runs on its destination device's lane, hence
    // on that device's cores.
    const std::vector<int> cores = device_cores(device);
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
