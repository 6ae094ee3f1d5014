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

}  // namespace bench
