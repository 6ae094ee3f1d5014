// The CPU device type: how the engine's workers of a logical CPU device are set up.
#include "device_cpu.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "janus/base/omp_threads.h"

namespace janus {
namespace {

// A kernel's work is done when it returns. The stream holds the worker's OpenMP team size for
// as long as the worker runs.
class CpuStream final : public Stream {
 public:
  CpuStream(int threads, std::vector<int> cores)
      : team_(threads), threads_(threads), cores_(std::move(cores)) {}
  void synchronize() override {}

  // After the worker slept long enough for its team's OpenMP threads to have gone to sleep too
  // (libgomp spins a few milliseconds, then waits on a futex), the team is spread over the
  // device's cores again (spread_team). Each woken by the thread that needed it, on that
  // thread's core, the pusher, the worker and its OpenMP thread can end up on one core with
  // the others idle, and stay there: every parallel region then waits for its threads to take
  // turns on that core. One parallel region and two affinity calls per thread, after an idle
  // spell of at least kIdle.
  void after_idle(std::chrono::nanoseconds slept) override {
    if (threads_ >= 2 && cores_.size() >= 2 && slept >= kIdle) spread_team(cores_, threads_);
  }

 private:
  static constexpr std::chrono::milliseconds kIdle{2};
  // Intra-op threads (OpenMP, and oneDNN on top of it) never exceed the device's share.
  const ScopedOmpThreads team_;
  const int threads_;
  const std::vector<int> cores_;  // the device's, for a compute worker
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
    return std::make_unique<CpuStream>(plan.kernel_threads, cores);
  }
};

}  // namespace

std::vector<int> spread_team(const std::vector<int>& cores, int threads) {
  std::vector<int> moved_to(static_cast<size_t>(threads), -1);
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c : cores) CPU_SET(c, &all);
#pragma omp parallel num_threads(threads)
  {
    const int i = omp_get_thread_num();
    const int core = cores[static_cast<size_t>(i) % cores.size()];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    // The kernel moves the calling thread before the call returns.
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0) {
      moved_to[static_cast<size_t>(i)] = sched_getcpu();
    }
    pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
  }
  return moved_to;
}

DeviceBackend& cpu_device_backend() {
  // Never destroyed, like the engine whose workers use it: a worker may still be starting
  // while the process exits and destroys its statics.
  static auto* backend = new CpuBackend;
  return *backend;
}

}  // namespace janus
