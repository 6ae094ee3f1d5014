// machine: this machine's limits as `janus hw` measures them (sgemm peak through oneDNN, copy
// bandwidth, cores, kernel threads), as a benchmark, so that `make bench` records the floors
// beside the figures they bound, the compute peak of the floors among them. Ends with one
// JSON line.
#include <cstdio>

#include "janus/profile/hardware.h"

#include "bench_util.h"
#include "suite.h"

namespace {

int run(const bench::Options& options) {
  const janus::profile::HardwareReport r = janus::profile::measure_hardware();
  std::fputs(janus::profile::to_string(r).c_str(), stdout);
  bench::print_json_line("machine", {{"sgemm_gflops", r.sgemm_gflops},
                                     {"compute_peak_gflops", r.compute_peak_gflops},
                                     {"copy_gbs", r.copy_gbs},
                                     {"cores", static_cast<double>(r.cores)},
                                     {"threads", static_cast<double>(r.threads)}});
  return 0;
}

const bench::Registration reg{"machine", "sgemm peak, copy bandwidth, cores (as janus hw)", run};

}  // namespace
