// elementwise_bandwidth: how close janus::add of two large float32 arrays comes to the
// machine's memory bandwidth.
//
// The machine's figure is the same add written as a plain loop, c[i] = a[i] + b[i], on the same
// number of threads as a Janus kernel gets (RunContext::num_threads), each thread adding its
// share, run as an engine operation on the compute worker. It draws on the memory system with
// the add's own streams (two read, one written), so the fraction cannot read above 1 but for
// timing noise: janus::add does the same work, plus the operator call and the wait. (A copy,
// the reference before, has one stream less and drew less from the memory system than the
// add: the fraction read 1.02 to 1.12 in some runs.) janus::add(a, b) is timed end to end
// (operator call, kernel, wait_to_read). Both move the same traffic on memory the caches
// cannot hold:
// - Each array is at least as large as the last-level cache (64 MiB at the least), so that
//   none can run from the cache.
// - Ordinary stores first read the line they write (write-allocate), and neither loop avoids
//   that: each moves 4 array-sizes (2 reads, read for ownership, write).
// The add's output comes from the pooled allocator: the warm-up calls fault its pages in, and
// later calls reuse those blocks, so no first touch falls in the timed calls. The two are timed
// in turn, kReps rounds, so that load from other processes falls on both alike; each figure is
// the best of its kReps runs (medians printed too). --quick uses 64 MiB arrays. Ends with one
// JSON line.
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

// Elements per array: 16M (64 MiB), or as many as the last-level cache holds when it is larger.
int64_t array_elements(bool quick) {
  constexpr int64_t kMin = int64_t{16} << 20;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (quick || l3 <= 0) return kMin;
  return std::max(kMin, static_cast<int64_t>(l3) / static_cast<int64_t>(sizeof(float)));
}
constexpr int kWarmup = 3;
constexpr int kReps = 15;

struct Stat {
  double best_gbs = 0, median_gbs = 0;
  long page_faults = 0;  // during the timed runs (first touches of memory)
};

long page_faults_so_far() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt + u.ru_majflt;
}

// Runs each of `runs` kWarmup times, then kReps rounds of one timed run of each in turn (so
// that load from other processes falls on all of them alike); runs[i] moves bytes[i] a run.
std::vector<Stat> measure(const std::vector<double>& bytes,
                          const std::vector<std::function<void()>>& runs) {
  for (const auto& run : runs) {
    for (int i = 0; i < kWarmup; ++i) run();
  }
  std::vector<std::vector<double>> gbs(runs.size());
  std::vector<long> faults(runs.size(), 0);
  for (int r = 0; r < kReps; ++r) {
    for (size_t k = 0; k < runs.size(); ++k) {
      const long faults_before = page_faults_so_far();
      Timer t;
      runs[k]();
      const double s = t.seconds();
      faults[k] += page_faults_so_far() - faults_before;
      gbs[k].push_back(bytes[k] / s / 1e9);
    }
  }
  std::vector<Stat> out;
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& g = gbs[k];
    out.push_back(Stat{*std::max_element(g.begin(), g.end()), bench::median(g), faults[k]});
  }
  return out;
}

// c[0, n) = a[0, n) + b[0, n) on `threads` OpenMP threads, each its contiguous share: a plain
// loop the compiler vectorizes.
void parallel_add(float* __restrict c, const float* __restrict a, const float* __restrict b,
                  int64_t n, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
  }
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  try {
    const int threads = bench::janus_kernel_threads();
    const int64_t elements = array_elements(options.quick);
    const double array_bytes = static_cast<double>(elements) * sizeof(float);
    std::printf(
        "elementwise_bandwidth: %lld float32 elements (%.0f MiB per array), %d thread(s), "
        "best of %d runs after %d warm-up runs\n",
        static_cast<long long>(elements), array_bytes / (1 << 20), threads, kReps, kWarmup);

    // Machine: the add as a plain loop, 4 array-sizes moved. Every buffer is written once
    // first (page faults). On the compute worker, as an engine operation (as Janus' add, which
    // also pays the push and the wait): an OpenMP team on this thread would slow the worker's.
    std::vector<float> ra(static_cast<size_t>(elements), 1.5f),
        rb(static_cast<size_t>(elements), 2.25f), rc(static_cast<size_t>(elements), 0.0f);
    const auto loop_add = [&] {
      bench::on_compute_worker(
          [&] { parallel_add(rc.data(), ra.data(), rb.data(), elements, threads); });
    };
    // Janus: add, 4 array-sizes moved.
    const NDArray a = janus::full({elements}, 1.5);
    const NDArray b = janus::full({elements}, 2.25);
    janus::wait_all();
    NDArray c;
    const auto janus_add = [&] {
      c = janus::add(a, b);
      janus::wait_to_read(c);
    };
    const std::vector<Stat> stats =
        measure({4 * array_bytes, 4 * array_bytes}, {loop_add, janus_add});
    const Stat& loop_bw = stats[0];
    const Stat& add_bw = stats[1];

    const std::vector<float> got = janus::to_vector<float>(c);
    for (int64_t i = 0; i < elements; i += 4099) {
      if (got[static_cast<size_t>(i)] != 3.75f) {
        std::fprintf(stderr, "elementwise_bandwidth: add gave %g at %lld, expected 3.75\n",
                     static_cast<double>(got[static_cast<size_t>(i)]), static_cast<long long>(i));
        return 1;
      }
    }

    if (rc[static_cast<size_t>(elements) / 2] != 3.75f) {
      std::fprintf(stderr, "elementwise_bandwidth: the reference loop gave %g, expected 3.75\n",
                   static_cast<double>(rc[static_cast<size_t>(elements) / 2]));
      return 1;
    }

    const double fraction = add_bw.best_gbs / loop_bw.best_gbs;
    // The same from the medians: less sensitive to one quiet moment on a shared machine.
    const double fraction_median = add_bw.median_gbs / loop_bw.median_gbs;
    std::printf("\n%-44s %10s %10s\n", "", "best GB/s", "median");
    std::printf("%-44s %10.2f %10.2f\n", "add, plain loop (4 array-sizes)", loop_bw.best_gbs,
                loop_bw.median_gbs);
    std::printf("%-44s %10.2f %10.2f\n", "janus::add, float32 (4 array-sizes)", add_bw.best_gbs,
                add_bw.median_gbs);
    std::printf(
        "page faults in the timed runs: loop %ld, add %ld (expected 0: no first touch is "
        "timed)\n",
        loop_bw.page_faults, add_bw.page_faults);
    std::printf(
        "\njanus::add / plain-loop add bandwidth: %.3f from the best runs, %.3f from the "
        "medians (target 0.80; at most 1 but for noise: the same streams)\n",
        fraction, fraction_median);
    bench::print_json_line("elementwise_bandwidth", {{"fraction", fraction},
                                                     {"add_gbs", add_bw.best_gbs},
                                                     {"reference_gbs", loop_bw.best_gbs},
                                                     {"add_median_gbs", add_bw.median_gbs},
                                                     {"reference_median_gbs", loop_bw.median_gbs},
                                                     {"fraction_median", fraction_median},
                                                     {"threads", static_cast<double>(threads)}});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "elementwise_bandwidth: %s\n", e.what());
    return 1;
  }
}

const bench::Registration reg{
    "elementwise_bandwidth",
    "add of two arrays larger than the L3: bandwidth as a fraction of a plain loop's add", run};

}  // namespace
