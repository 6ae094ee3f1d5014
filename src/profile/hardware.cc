// measure_hardware: CPU description from the OS, sgemm peak through oneDNN, copy bandwidth.
#include "janus/profile/hardware.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"
#include "janus/engine/engine.h"

namespace janus::profile {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <typename F>
double on_compute_worker(F measure) {
  double result = 0;
  run_on_compute_worker([&] { result = measure(); });
  return result;
}

}  // namespace

int kernel_threads() {
  std::atomic<int> threads{0};
  engine().push([&](const RunContext& ctx) { threads = ctx.num_threads; }, {}, {}, cpu());
  engine().wait_all();
  return threads.load();
}

void run_on_compute_worker(const std::function<void()>& fn) {
  engine().push([&fn](const RunContext&) { fn(); }, {}, {}, cpu());
  engine().wait_all();
}

namespace {

enum class Clock { kWall, kThreadCpu };

// The measurements themselves, on the calling thread: the best of `runs` after a first one
// that warms the caches and oneDNN's JIT.
double sgemm_gflops_here(int threads, int64_t n, int runs, Clock clock) {
  const ScopedOmpThreads team(threads);
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
  for (int i = 0; i <= runs; ++i) {
    const auto wall = std::chrono::steady_clock::now();
    const double cpu = thread_cpu_seconds();
    prim.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
    const double seconds = clock == Clock::kWall ? seconds_since(wall) : thread_cpu_seconds() - cpu;
    if (i > 0) best = std::max(best, 2.0 * static_cast<double>(n * n * n) / seconds / 1e9);
  }
  return best;
}

double copy_gbs_here(int threads) {
  constexpr size_t n = size_t{16} << 20;
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    const auto t = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < threads; ++k) {
      const size_t lo = n * static_cast<size_t>(k) / static_cast<size_t>(threads);
      const size_t hi = n * static_cast<size_t>(k + 1) / static_cast<size_t>(threads);
      std::memcpy(dst.data() + lo, src.data() + lo, (hi - lo) * sizeof(float));
    }
    if (i > 0)
      best = std::max(best, 2.0 * static_cast<double>(n * sizeof(float)) / seconds_since(t) / 1e9);
  }
  return best;
}

}  // namespace

double measure_sgemm_gflops(int threads) {
  return on_compute_worker([threads] { return sgemm_gflops_here(threads, 2048, 5, Clock::kWall); });
}

double measure_compute_peak_gflops(int threads) {
  // One thread, so that the thread's CPU time is the product's whole time.
  return threads *
         on_compute_worker([] { return sgemm_gflops_here(1, 1024, 7, Clock::kThreadCpu); });
}

double measure_copy_gbs(int threads) {
  return on_compute_worker([threads] { return copy_gbs_here(threads); });
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::vector<std::string> caches() {
  std::vector<std::string> out;
  const std::pair<const char*, int> levels[] = {{"L1d", _SC_LEVEL1_DCACHE_SIZE},
                                                {"L2", _SC_LEVEL2_CACHE_SIZE},
                                                {"L3", _SC_LEVEL3_CACHE_SIZE}};
  for (const auto& [name, key] : levels) {
    const long bytes = sysconf(key);
    if (bytes > 0) out.push_back(fmt::format("{} {} KiB", name, bytes / 1024));
  }
  return out;
}

std::vector<std::string> instruction_sets() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) out.emplace_back("sse4.2");
  if (__builtin_cpu_supports("avx")) out.emplace_back("avx");
  if (__builtin_cpu_supports("avx2")) out.emplace_back("avx2");
  if (__builtin_cpu_supports("fma")) out.emplace_back("fma");
  if (__builtin_cpu_supports("avx512f")) out.emplace_back("avx512f");
  if (__builtin_cpu_supports("avx512bw")) out.emplace_back("avx512bw");
  if (__builtin_cpu_supports("avx512vnni")) out.emplace_back("avx512vnni");
#endif
  return out;
}

}  // namespace

HardwareReport measure_hardware(int threads) {
  HardwareReport r;
  r.cpu = cpu_model();
  r.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  r.threads = threads > 0 ? threads : kernel_threads();
  r.isa = instruction_sets();
  r.caches = caches();
  r.sgemm_gflops = measure_sgemm_gflops(r.threads);
  r.compute_peak_gflops = measure_compute_peak_gflops(r.threads);
  r.copy_gbs = measure_copy_gbs(r.threads);
  return r;
}

std::string to_string(const HardwareReport& r) {
  return fmt::format(
      "cpu: {}\ncores: {} (a Janus kernel on cpu(0) uses {} threads)\ninstruction sets: {}\n"
      "caches: {}\nsgemm peak: {:.1f} GFLOP/s (2048^3 float32 through oneDNN, {} threads)\n"
      "compute peak of the floors: {:.1f} GFLOP/s (one thread's 1024^3 sgemm in its CPU time x "
      "{})\n"
      "memory bandwidth: {:.1f} GB/s (memcpy of 64 MiB, read + write, {} threads)\n",
      r.cpu, r.cores, r.threads, fmt::join(r.isa, " "), fmt::join(r.caches, ", "), r.sgemm_gflops,
      r.threads, r.compute_peak_gflops, r.threads, r.copy_gbs, r.threads);
}

}  // namespace janus::profile
