// machine: this machine's limits as `janus hw` measures them (sgemm peak through oneDNN, copy
// bandwidth, cores, kernel threads), as a benchmark, so that `make bench` records the floors
// beside the figures they bound, and the compute peak of the floors (machine.h). Ends with one
// JSON line.
#include "machine.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"
#include "janus/profile/hardware.h"

#include "bench_util.h"
#include "suite.h"

namespace bench {

double compute_peak_gflops(int threads) {
  double best = 0;
  on_compute_worker([&best] {
    const janus::ScopedOmpThreads one(1);  // oneDNN then runs on this thread alone
    constexpr int64_t n = 1024;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const dnnl::memory::desc md({n, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
    dnnl::memory a(md, eng), b(md, eng), c(md, eng);
    for (auto* m : {&a, &b}) {
      auto* p = static_cast<float*>(m->get_data_handle());
      for (int64_t i = 0; i < n * n; ++i) p[i] = 0.001f * static_cast<float>(i % 7);
    }
    dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
    dnnl::stream s(eng);
    auto thread_seconds = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    for (int i = 0; i < 8; ++i) {
      const double t0 = thread_seconds();
      prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
      s.wait();
      if (i > 0) best = std::max(best, 2.0 * n * n * n / (thread_seconds() - t0) / 1e9);
    }
  });
  return best * threads;
}

}  // namespace bench

namespace {

int run(const bench::Options& options) {
  const janus::profile::HardwareReport r = janus::profile::measure_hardware();
  std::fputs(janus::profile::to_string(r).c_str(), stdout);
  const double compute_peak = bench::compute_peak_gflops(r.threads);
  std::printf(
      "compute peak of the floors: %.1f GFLOP/s (one thread's sgemm in its CPU time x %d)\n",
      compute_peak, r.threads);
  bench::print_json_line("machine", {{"sgemm_gflops", r.sgemm_gflops},
                                     {"compute_peak_gflops", compute_peak},
                                     {"copy_gbs", r.copy_gbs},
                                     {"cores", static_cast<double>(r.cores)},
                                     {"threads", static_cast<double>(r.threads)}});
  return 0;
}

const bench::Registration reg{"machine", "sgemm peak, copy bandwidth, cores (as janus hw)", run};

}  // namespace
