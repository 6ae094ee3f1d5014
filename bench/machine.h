// This machine's limits as the benchmarks measure them: the intra-op threads that a Janus
// kernel gets, the sgemm peak (a large oneDNN product) and the memory bandwidth (a parallel
// copy). Benchmarks compare Janus with these floors in the same run.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <dnnl.hpp>
#include <vector>

#include "bench_util.h"
#include "janus/engine/engine.h"

namespace bench {

/// RunContext::num_threads of a CPU kernel.
inline int janus_kernel_threads() {
  std::atomic<int> threads{0};
  janus::engine().push([&](const janus::RunContext& ctx) { threads = ctx.num_threads; }, {}, {},
                       janus::cpu());
  janus::engine().wait_all();
  return threads.load();
}

/// GFLOP/s of a 2048^3 float32 product through oneDNN on `threads` threads (best of 5).
inline double sgemm_peak_gflops(int threads) {
  omp_set_num_threads(threads);
  constexpr int64_t n = 2048;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const dnnl::memory::desc md({n, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::memory a(md, eng), b(md, eng), c(md, eng);
  for (auto* m : {&a, &b}) {
    auto* p = static_cast<float*>(m->get_data_handle());
    for (int64_t i = 0; i < n * n; ++i) p[i] = 0.001f * static_cast<float>(i % 7);
  }
  dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
  dnnl::stream s(eng);
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    Timer t;
    prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
    if (i > 0) best = std::max(best, 2.0 * n * n * n / t.seconds() / 1e9);
  }
  return best;
}

/// GB/s moved (read + written) by a memcpy of 64 MiB split over `threads` threads (best of 5).
inline double copy_bandwidth_gbs(int threads) {
  constexpr size_t n = size_t{16} << 20;
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    Timer t;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < threads; ++k) {
      const size_t lo = n * static_cast<size_t>(k) / static_cast<size_t>(threads);
      const size_t hi = n * static_cast<size_t>(k + 1) / static_cast<size_t>(threads);
      std::memcpy(dst.data() + lo, src.data() + lo, (hi - lo) * sizeof(float));
    }
    if (i > 0)
      best = std::max(best, 2.0 * static_cast<double>(n * sizeof(float)) / t.seconds() / 1e9);
  }
  return best;
}

}  // namespace bench
