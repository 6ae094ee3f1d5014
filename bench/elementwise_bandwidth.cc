// elementwise_bandwidth: how close janus::add of two large float32 arrays comes to the
// machine's memory bandwidth.
//
// The machine's figure is a copy of one array into another on the same number of threads as a
// Janus kernel gets (RunContext::num_threads), each thread copying its share: once with memcpy
// and once with a plain copy loop, the better of the two. janus::add(a, b) is timed end to end
// (operator call, kernel, wait_to_read). The two count the same traffic on memory the caches
// cannot hold:
// - Each array is at least as large as the last-level cache (64 MiB at the least), so that
//   neither can run from the cache.
// - Ordinary stores first read the line they write (write-allocate), and neither glibc's memcpy
//   below its non-temporal threshold (a fraction of the L3) nor the loops here avoid that: a
//   copy moves 3 array-sizes (read, read for ownership, write) and the add 4 (2 reads, read for
//   ownership, write).
// The copy is still not a strict bound: with 2 streams it may draw less from the memory system
// than the add's 3 do (the fraction can read above 1). A reference loop with the add's own
// stream count would be one.
// The add's output comes from the pooled allocator: the warm-up calls fault its pages in, and
// later calls reuse those blocks, so no first touch falls in the timed calls. The three are
// timed in turn, kReps rounds, so that load from other processes falls on all alike; each
// figure is the best of its kReps runs (medians printed too). --quick uses 64 MiB arrays. Ends
// with one JSON line.
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
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

// dst[0, n) = src[0, n) on `threads` OpenMP threads, each its contiguous share.
template <typename Copy>
void parallel_copy(float* dst, const float* src, int64_t n, int threads, Copy copy) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    if (lo < hi) copy(dst + lo, src + lo, hi - lo);
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

    // Machine: copy bandwidth, 3 array-sizes moved. Both buffers are written once first (page
    // faults).
    std::vector<float> src(static_cast<size_t>(elements), 1.0f),
        dst(static_cast<size_t>(elements), 0.0f);
    // On the compute worker, as an engine operation (as Janus' add, which also pays the push
    // and the wait): an OpenMP team on this thread would slow the worker's.
    const auto copy_memcpy = [&] {
      bench::on_compute_worker([&] {
        parallel_copy(dst.data(), src.data(), elements, threads,
                      [](float* d, const float* s, int64_t n) {
                        std::memcpy(d, s, static_cast<size_t>(n) * sizeof(float));
                      });
      });
    };
    const auto copy_loop = [&] {
      bench::on_compute_worker([&] {
        parallel_copy(dst.data(), src.data(), elements, threads,
                      [](float* __restrict d, const float* __restrict s, int64_t n) {
                        for (int64_t i = 0; i < n; ++i) d[i] = s[i];
                      });
      });
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
    const std::vector<Stat> stats = measure({3 * array_bytes, 3 * array_bytes, 4 * array_bytes},
                                            {copy_memcpy, copy_loop, janus_add});
    const Stat& memcpy_bw = stats[0];
    const Stat& loop_bw = stats[1];
    const Stat& add_bw = stats[2];
    const double copy_gbs = std::max(memcpy_bw.best_gbs, loop_bw.best_gbs);

    const std::vector<float> got = janus::to_vector<float>(c);
    for (int64_t i = 0; i < elements; i += 4099) {
      if (got[static_cast<size_t>(i)] != 3.75f) {
        std::fprintf(stderr, "elementwise_bandwidth: add gave %g at %lld, expected 3.75\n",
                     static_cast<double>(got[static_cast<size_t>(i)]), static_cast<long long>(i));
        return 1;
      }
    }

    const double fraction = add_bw.best_gbs / copy_gbs;
    // The same from the medians: less sensitive to one quiet moment on a shared machine.
    const double fraction_median =
        add_bw.median_gbs / std::max(memcpy_bw.median_gbs, loop_bw.median_gbs);
    std::printf("\n%-44s %10s %10s\n", "", "best GB/s", "median");
    std::printf("%-44s %10.2f %10.2f\n", "copy, memcpy (3 array-sizes)", memcpy_bw.best_gbs,
                memcpy_bw.median_gbs);
    std::printf("%-44s %10.2f %10.2f\n", "copy, plain loop (3 array-sizes)", loop_bw.best_gbs,
                loop_bw.median_gbs);
    std::printf("%-44s %10.2f %10.2f\n", "janus::add, float32 (4 array-sizes)", add_bw.best_gbs,
                add_bw.median_gbs);
    std::printf(
        "page faults in the timed runs: memcpy %ld, copy loop %ld, add %ld (expected 0: "
        "no first touch is timed)\n",
        memcpy_bw.page_faults, loop_bw.page_faults, add_bw.page_faults);
    std::printf(
        "\nadd / copy bandwidth: %.3f from the best runs, %.3f from the medians (target "
        "0.70; copy = the better of memcpy and the loop)\n",
        fraction, fraction_median);
    bench::print_json_line("elementwise_bandwidth", {{"fraction", fraction},
                                                     {"add_gbs", add_bw.best_gbs},
                                                     {"copy_gbs", copy_gbs},
                                                     {"memcpy_gbs", memcpy_bw.best_gbs},
                                                     {"copy_loop_gbs", loop_bw.best_gbs},
                                                     {"add_median_gbs", add_bw.median_gbs},
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
    "add of two arrays larger than the L3: bandwidth as a fraction of a copy's", run};

}  // namespace
