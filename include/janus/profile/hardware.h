// This machine's limits, measured: what benchmarks compare Janus with (`janus hw`). Layer:
// profile.
#pragma once

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
  double copy_gbs = 0;              // bytes read + written by a 64 MiB memcpy, best of 5
};

/// RunContext::num_threads of a CPU kernel on cpu(0).
int kernel_threads();
/// GFLOP/s of a 2048^3 float32 product through oneDNN on `threads` threads (best of 5).
double measure_sgemm_gflops(int threads);
/// GB/s moved (read + written) by a memcpy of 64 MiB split over `threads` threads (best of 5).
double measure_copy_gbs(int threads);

/// Measures the machine (about a second). `threads` 0: the threads of a Janus kernel.
HardwareReport measure_hardware(int threads = 0);

/// The report as lines of text.
std::string to_string(const HardwareReport& report);

}  // namespace janus::profile
