// This machine's limits as the benchmarks use them (measured by the profile layer, as `janus hw`
// prints them): the intra-op threads of a Janus kernel, the sgemm peak and the copy bandwidth.
#pragma once

#include <functional>

#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/profile/hardware.h"

namespace bench {

/// Runs `fn` as one engine operation on cpu(0)'s compute worker and waits for it. Benchmarks
/// that call oneDNN or OpenMP directly do it there, on the thread (and OpenMP team) where
/// Janus' kernels run: a parallel region on the caller's thread would start a second team, and
/// with more OpenMP threads than cores libgomp's barriers sleep at once, slowing every kernel
/// after it (Janus' included).
inline void on_compute_worker(const std::function<void()>& fn) {
  janus::engine().push([&fn](const janus::RunContext&) { fn(); }, {}, {}, janus::cpu());
  janus::wait_all();
}

inline int janus_kernel_threads() { return janus::profile::kernel_threads(); }
inline double sgemm_peak_gflops(int threads) {
  return janus::profile::measure_sgemm_gflops(threads);
}
inline double copy_bandwidth_gbs(int threads) { return janus::profile::measure_copy_gbs(threads); }

/// The compute peak that the benchmarks' floors use: a 1024^3 oneDNN sgemm on one thread of the
/// compute worker, timed in that thread's CPU time (best of several), times `threads`. Every
/// compute floor must be a lower bound, and the wall-clock sgemm peak is not one on a loaded
/// machine: preemption deflates it, the floor comes out too high, and a kernel beat it
/// (hybridize_lenet_train: floor_ratio 0.68 under load). CPU time does not count the time the
/// thread waits for a core, and one thread's rate times the threads is at least what they reach
/// together (cores share power and memory), so no kernel on `threads` threads multiplies faster.
double compute_peak_gflops(int threads);

}  // namespace bench
