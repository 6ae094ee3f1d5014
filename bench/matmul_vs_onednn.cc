// matmul_vs_onednn: janus::dot and janus::matmul (float32) against oneDNN's matmul called
// directly, for 1024x512 · 512x2048, 1x512 · 512x256 and 1000x1000 · 1000x1000.
//
// oneDNN runs on the compute worker, a sample per engine operation (bench::on_compute_worker:
// on the caller's thread it would start a second OpenMP team), with the same number of OpenMP
// threads as a Janus kernel gets; its primitive, memory objects and stream are built once,
// outside the timed loop, so each call is execute + wait. Janus is timed end to
// end: the operator call (registry, shape rule, output allocation, engine push), the kernel on
// the worker, and wait_to_read. Each sample is the mean of enough back-to-back calls to last
// about 5 ms (one call for the large products); dot, oneDNN and matmul samples alternate
// (after a warm-up of each), so that load from other processes falls on all three alike, and
// the figure is the median sample (the fastest sample is printed too). Janus runs products
// below 2^18 multiply-adds on one thread (src/ops/linalg/gemm.cc), so for short products oneDNN
// on one thread is timed too and printed beside. Ends with one JSON line: Janus/oneDNN time
// ratios (1.0 = as fast) against oneDNN on the full thread count, and for 1x512x256 also
// against oneDNN on one thread.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

constexpr int kSamples = 31;
constexpr double kSampleSeconds = 0.005;

struct Case {
  int64_t m, k, n;
};

// Calls per sample so that a sample lasts about kSampleSeconds (one call timed after warm-up).
int calls_per_sample(const std::function<void()>& call) {
  for (int i = 0; i < 3; ++i) call();
  Timer t;
  call();
  const double s = std::max(t.seconds(), 1e-7);
  return std::clamp(static_cast<int>(kSampleSeconds / s), 1, 20000);
}

double sample_us(const std::function<void()>& call, int calls) {
  Timer t;
  for (int i = 0; i < calls; ++i) call();
  return t.us() / calls;
}

/// oneDNN matmul on row-major float32 operands, everything built once.
class OneDnnMatmul {
 public:
  OneDnnMatmul(const Case& c, dnnl::engine& eng)
      : a_(static_cast<size_t>(c.m * c.k)),
        b_(static_cast<size_t>(c.k * c.n)),
        c_(static_cast<size_t>(c.m * c.n)),
        stream_(eng) {
    using dt = dnnl::memory::data_type;
    using dims = dnnl::memory::dims;
    const dnnl::memory::desc ad({c.m, c.k}, dt::f32, dims{c.k, 1});
    const dnnl::memory::desc bd({c.k, c.n}, dt::f32, dims{c.n, 1});
    const dnnl::memory::desc cd({c.m, c.n}, dt::f32, dims{c.n, 1});
    // A user scratchpad: the primitive runs on the compute worker, not where it was built.
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), attr, eng);
    prim_ = dnnl::matmul(pd);
    impl_ = pd.impl_info_str();
    for (size_t i = 0; i < a_.size(); ++i) a_[i] = static_cast<float>(i % 17) * 0.01f;
    for (size_t i = 0; i < b_.size(); ++i) b_[i] = static_cast<float>(i % 13) * 0.01f;
    args_ = {{DNNL_ARG_SRC, dnnl::memory(ad, eng, a_.data())},
             {DNNL_ARG_WEIGHTS, dnnl::memory(bd, eng, b_.data())},
             {DNNL_ARG_DST, dnnl::memory(cd, eng, c_.data())},
             {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), eng)}};
  }
  void run() {
    prim_.execute(stream_, args_);
    stream_.wait();
  }
  const std::string& impl() const { return impl_; }

 private:
  std::vector<float> a_, b_, c_;
  dnnl::stream stream_;
  dnnl::matmul prim_;
  std::string impl_;
  std::unordered_map<int, dnnl::memory> args_;
};

struct Row {
  Case shape;
  double dot_us = 0, matmul_us = 0, onednn_us = 0;     // medians
  double dot_min = 0, matmul_min = 0, onednn_min = 0;  // fastest samples
  double onednn1_us = std::nan("");                    // oneDNN on one thread (median)
  std::string impl;
  double dot_ratio() const { return dot_us / onednn_us; }
  double matmul_ratio() const { return matmul_us / onednn_us; }
};

Row measure(const Case& c, int threads, dnnl::engine& eng) {
  Row row{c};
  const NDArray a = janus::random_uniform(-1, 1, {c.m, c.k});
  const NDArray b = janus::random_uniform(-1, 1, {c.k, c.n});
  janus::wait_all();
  OneDnnMatmul ref(c, eng);
  row.impl = ref.impl();

  const std::function<void()> dot_call = [&] { janus::wait_to_read(janus::dot(a, b)); };
  const std::function<void()> matmul_call = [&] { janus::wait_to_read(janus::matmul(a, b)); };
  const std::function<void()> onednn_call = [&] { ref.run(); };
  // oneDNN's samples run on the compute worker, a sample per engine operation
  // (bench::on_compute_worker), with the worker's threads or `with_threads`.
  auto onednn_sample_us = [&](int calls, int with_threads) {
    double us = 0;
    bench::on_compute_worker([&] {
      const janus::ScopedOmpThreads team(with_threads);
      us = sample_us(onednn_call, calls);
    });
    return us;
  };
  const janus::ScopedOmpThreads team(threads);
  const int n_dot = calls_per_sample(dot_call);
  const int n_matmul = calls_per_sample(matmul_call);
  int n_onednn = 1;
  bench::on_compute_worker([&] { n_onednn = calls_per_sample(onednn_call); });
  // Short products: also oneDNN on one thread, since Janus runs a product this small on one
  // thread of its share (gemm.cc), and that is the fairer reference for it.
  const bool short_call = n_onednn > 10 && threads > 1;
  std::vector<double> dot_s, matmul_s, onednn_s, onednn1_s;
  for (int s = 0; s < kSamples; ++s) {
    dot_s.push_back(sample_us(dot_call, n_dot));
    onednn_s.push_back(onednn_sample_us(n_onednn, threads));
    matmul_s.push_back(sample_us(matmul_call, n_matmul));
    if (short_call) onednn1_s.push_back(onednn_sample_us(n_onednn, 1));
  }
  if (short_call) row.onednn1_us = bench::median(onednn1_s);
  row.dot_us = bench::median(dot_s);
  row.matmul_us = bench::median(matmul_s);
  row.onednn_us = bench::median(onednn_s);
  if (threads == 1) row.onednn1_us = row.onednn_us;
  row.dot_min = bench::min_of(dot_s);
  row.matmul_min = bench::min_of(matmul_s);
  row.onednn_min = bench::min_of(onednn_s);
  return row;
}

// Janus's dot against a float64 loop on a few entries, so that a fast wrong answer cannot pass.
bool check_dot(const Case& c) {
  const NDArray a = janus::random_uniform(-1, 1, {c.m, c.k});
  const NDArray b = janus::random_uniform(-1, 1, {c.k, c.n});
  const std::vector<float> av = janus::to_vector<float>(a), bv = janus::to_vector<float>(b);
  const std::vector<float> cv = janus::to_vector<float>(janus::dot(a, b));
  for (int64_t t = 0; t < 16; ++t) {
    const int64_t i = (t * 7919) % c.m, j = (t * 104729) % c.n;
    double ref = 0;
    for (int64_t p = 0; p < c.k; ++p) {
      ref += static_cast<double>(av[static_cast<size_t>(i * c.k + p)]) *
             bv[static_cast<size_t>(p * c.n + j)];
    }
    const double got = cv[static_cast<size_t>(i * c.n + j)];
    if (std::abs(got - ref) > 1e-3 * (1.0 + std::abs(ref))) {
      std::fprintf(stderr,
                   "matmul_vs_onednn: dot %lldx%lldx%lld at (%lld, %lld) gave %g, "
                   "expected %g\n",
                   static_cast<long long>(c.m), static_cast<long long>(c.k),
                   static_cast<long long>(c.n), static_cast<long long>(i),
                   static_cast<long long>(j), got, ref);
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  try {
    const int threads = bench::janus_kernel_threads();
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const std::vector<Case> cases = {{1024, 512, 2048}, {1, 512, 256}, {1000, 1000, 1000}};
    std::printf(
        "matmul_vs_onednn: float32, %d thread(s) for both (%d cores), median of %d "
        "samples of ~%.0f ms\n",
        threads, janus::hardware_cores(), kSamples, kSampleSeconds * 1e3);
    bool ok = true;
    for (const Case& c : cases) ok &= check_dot(c);
    std::vector<Row> rows;
    for (const Case& c : cases) rows.push_back(measure(c, threads, eng));

    std::printf("\n%-20s %11s %11s %11s %9s %9s %9s %10s  %s\n", "M x K x N", "dot us", "matmul us",
                "oneDNN us", "dot/1dnn", "mm/1dnn", "best d/o", "1dnn GF/s", "oneDNN impl");
    for (const Row& r : rows) {
      const std::string name = std::to_string(r.shape.m) + " x " + std::to_string(r.shape.k) +
                               " x " + std::to_string(r.shape.n);
      const double gflops =
          2.0 * static_cast<double>(r.shape.m * r.shape.k * r.shape.n) / (r.onednn_us * 1e3);
      std::printf("%-20s %11.2f %11.2f %11.2f %9.3f %9.3f %9.3f %10.1f  %s\n", name.c_str(),
                  r.dot_us, r.matmul_us, r.onednn_us, r.dot_ratio(), r.matmul_ratio(),
                  r.dot_min / r.onednn_min, gflops, r.impl.c_str());
    }
    std::printf("(times are medians; best d/o compares the fastest dot and oneDNN samples)\n");
    for (const Row& r : rows) {
      if (std::isnan(r.onednn1_us)) continue;
      std::printf("%lld x %lld x %lld: oneDNN on 1 thread %.2f us, dot / that %.3f\n",
                  static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.k),
                  static_cast<long long>(r.shape.n), r.onednn1_us, r.dot_us / r.onednn1_us);
    }
    std::printf("\ntarget: Janus/oneDNN within 1.1 for every shape (medians)\n");
    if (!ok) {
      std::fprintf(stderr, "matmul_vs_onednn: a correctness check failed (see above)\n");
      return 1;
    }
    bench::print_json_line("matmul_vs_onednn",
                           {{"ratio", rows[2].dot_ratio()},
                            {"dot_1000_us", rows[2].dot_us},
                            {"onednn_1000_us", rows[2].onednn_us},
                            {"ratio_1024x512x2048", rows[0].dot_ratio()},
                            {"ratio_1x512x256", rows[1].dot_ratio()},
                            {"ratio_1x512x256_vs_1thread", rows[1].dot_us / rows[1].onednn1_us},
                            {"matmul_ratio", rows[2].matmul_ratio()},
                            {"matmul_ratio_1024x512x2048", rows[0].matmul_ratio()},
                            {"matmul_ratio_1x512x256", rows[1].matmul_ratio()},
                            {"threads", static_cast<double>(threads)}});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matmul_vs_onednn: %s\n", e.what());
    return 1;
  }
}

const bench::Registration reg{
    "matmul_vs_onednn", "matmul 1000^3 (and two other shapes): Janus time over oneDNN sgemm", run};

}  // namespace
