// This machine's limits as the benchmarks use them (measured by the profile layer, as `janus hw`
// prints them): the intra-op threads of a Janus kernel, the sgemm peak and the copy bandwidth.
#pragma once

#include <functional>

#include "janus/profile/hardware.h"

namespace bench {

/// Runs `fn` as one engine operation on cpu(0)'s compute worker and waits for it
/// (profile::run_on_compute_worker says why benchmarks that call oneDNN or OpenMP do).
inline void on_compute_worker(const std::function<void()>& fn) {
  janus::profile::run_on_compute_worker(fn);
}

inline int janus_kernel_threads() { return janus::profile::kernel_threads(); }
inline double sgemm_peak_gflops(int threads) {
  return janus::profile::measure_sgemm_gflops(threads);
}
inline double copy_bandwidth_gbs(int threads) { return janus::profile::measure_copy_gbs(threads); }

/// The compute peak that the benchmarks' floors use (profile::measure_compute_peak_gflops: one
/// thread's sgemm in its CPU time, times `threads`; why it is a lower bound is said there).
inline double compute_peak_gflops(int threads) {
  return janus::profile::measure_compute_peak_gflops(threads);
}

}  // namespace bench
