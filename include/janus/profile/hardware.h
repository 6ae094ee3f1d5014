// This machine's limits, measured: what benchmarks compare Janus with (`janus hw`). Layer:
// profile.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace janus::profile {

struct HardwareReport {
  std::string cpu;                  // model name
  int cores = 0;                    // logical CPUs this process may use
  int threads = 0;                  // intra-op threads of a Janus kernel on cpu(0)
  std::vector<std::string> isa;     // instruction sets present (sse4.2, avx2, avx512f, ...)
  std::vector<std::string> caches;  // "L1d 48 KiB", ...
  double sgemm_gflops = 0;          // 2048^3 float32 product through oneDNN, best of 5
  double compute_peak_gflops = 0;   // what a floor may assume (measure_compute_peak_gflops)
  double copy_gbs = 0;              // bytes read + written by a 64 MiB memcpy, best of 5
};

/// RunContext::num_threads of a CPU kernel on cpu(0).
int kernel_threads();
/// Runs `fn` as one engine operation on cpu(0)'s compute worker and waits for it. Measurements
/// that call oneDNN or OpenMP directly run there, on the thread (and OpenMP team) where Janus'
/// kernels run: a parallel region on the caller's thread would start a second team, and with
/// more OpenMP threads than cores libgomp's barriers sleep at once, slowing every kernel after
/// it (Janus' included).
void run_on_compute_worker(const std::function<void()>& fn);
/// GFLOP/s of a 2048^3 float32 product through oneDNN on `threads` threads, in wall-clock time
/// (best of 5): what the machine delivers now.
double measure_sgemm_gflops(int threads);
/// The compute peak that benchmark floors use: a 1024^3 oneDNN product on one thread of the
/// compute worker, timed in that thread's CPU time (best of 7), times `threads`. A floor must be
/// a lower bound, and the wall-clock peak is not one on a loaded machine: preemption deflates
/// it, the floor comes out too high, and a kernel beats it. CPU time does not count the time
/// the thread waits for a core, and one thread's rate times the threads is at least what they
/// reach together (cores share power and memory), so no kernel on `threads` threads multiplies
/// faster.
double measure_compute_peak_gflops(int threads);
/// GB/s moved (read + written) by a memcpy of 64 MiB split over `threads` threads (best of 5).
double measure_copy_gbs(int threads);

/// Measures the machine (about a second). `threads` 0: the threads of a Janus kernel.
HardwareReport measure_hardware(int threads = 0);

/// The report as lines of text.
std::string to_string(const HardwareReport& report);

}  // namespace janus::profile
