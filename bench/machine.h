// This machine's limits as the benchmarks use them (measured by the profile layer, as `janus hw`
// prints them): the intra-op threads of a Janus kernel, the sgemm peak and the copy bandwidth.
#pragma once

#include "janus/profile/hardware.h"

namespace bench {

inline int janus_kernel_threads() { return janus::profile::kernel_threads(); }
inline double sgemm_peak_gflops(int threads) { return janus::profile::measure_sgemm_gflops(threads); }
inline double copy_bandwidth_gbs(int threads) { return janus::profile::measure_copy_gbs(threads); }

}  // namespace bench
