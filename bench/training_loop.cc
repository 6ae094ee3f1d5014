// training_loop: the seed's experiment on the memory footprint of asynchronous training
// (d2l.ai 12.2.4). An MLP 512 -> 2048 -> 512 -> 1 (ReLU) is trained with L2 loss and SGD on 150
// random batches of 1024, once with a barrier (wait_to_read on the loss) after each batch and
// once without. Printed as the seed prints it: the time at batches 50, 100 and 150 (issue time
// without the barrier), the time per epoch, and the memory growth (process RSS, as the seed's
// `ps`, and the peak of Janus' allocator). The loop's FLOPs (forward 2mnk per layer, backward
// twice that, no input gradient for the first layer) are compared with this machine's sgemm
// peak (peak_fraction, the target): the best rate of a large oneDNN product (2048^3) or
// of any of the loop's own large products, each timed alone with the loop's threads and shapes and
// oneDNN primitive (matmuls whose transposed operand is described by strides: the forward's
// weights, the backward's output gradient). A product of
// the loop that runs faster than 2048^3 raises the peak, so the loop is never compared with a
// rate below one its own products reach. The products alone, at their best, also give the time
// an epoch spends in them (products_s); the rest of the epoch is everything else. The floor binds
// compute: the same FLOPs at the compute peak (machine.h: one thread's sgemm rate in CPU time,
// times the threads, which load cannot deflate as it deflates the wall-clock peak); the random
// batches, the elementwise layers and the update only add time. floor_ratio = epoch with the
// barrier / floor >= 1. Ends with one JSON line.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"
#include "janus/janus.h"
#include "janus/optim/trainer.h"

#include "bench_util.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;
namespace nn = janus::nn;

constexpr int kBatches = 150;
constexpr int64_t kBatch = 1024;

double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

struct Run {
  double epoch_s, rss_mb, peak_mb;
};

Run epoch(nn::Sequential& net, janus::optim::Trainer& trainer, bool barrier) {
  const nn::L2Loss loss;
  const double rss0 = rss_mb();
  janus::allocator_for(janus::cpu()).reset_peak();
  const int64_t in_use0 = janus::memory_stats(janus::cpu()).bytes_in_use;
  Timer timer;
  {
    for (int i = 0; i < kBatches; ++i) {
      const NDArray x = janus::random_normal(0, 1, {kBatch, 512});
      const NDArray y = janus::ones({kBatch});
      NDArray l;
      {
        janus::autograd::RecordScope record;
        l = loss(net(x), y);
      }
      janus::autograd::backward(l);
      trainer.step(kBatch);
      if (barrier) janus::wait_to_read(l);  // barrier before a new batch
      if ((i + 1) % 50 == 0) std::printf("batch %d, time %.4f sec\n", i + 1, timer.seconds());
    }
    janus::wait_all();
  }
  const Run r{
      timer.seconds(), rss_mb() - rss0,
      static_cast<double>(janus::memory_stats(janus::cpu()).peak_bytes_in_use - in_use0) / 1e6};
  std::printf("time per epoch: %.4f sec\n", r.epoch_s);
  std::printf(
      "increased memory: %f MB (process RSS); Janus allocator peak above the start: %.1f MB\n",
      r.rss_mb, r.peak_mb);
  return r;
}

// One matrix product of a batch, C[m, n] = op(A)[m, k] · B[k, n], as the loop runs it: the
// forward's fully_connected is a oneDNN matmul with the bias, x [m, k] · W[n, k]ᵀ, its weights
// read transposed through strides (ops/nn/fully_connected.cc), the backward's dot a oneDNN
// matmul whose transposed operand A is described by strides.
struct Product {
  const char* what;
  bool forward;      // fully_connected: B = W[n, k] read transposed, with a bias
  bool transpose_a;  // matmul: A is stored [k, m]
  int64_t m, k, n;
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  }
};

// Every product of one batch (MLP 512 -> 2048 -> 512 -> 1, batch 1024): the three layers'
// forward, the weight gradient of each (dyᵀ · x) and the input gradients of layers 3 and 2.
std::vector<Product> batch_products() {
  return {{"fc1 forward", true, false, kBatch, 512, 2048},
          {"fc2 forward", true, false, kBatch, 2048, 512},
          {"fc3 forward", true, false, kBatch, 512, 1},
          {"fc3 dx = dy W", false, false, kBatch, 1, 512},
          {"fc3 dW = dy^T x", false, true, 1, kBatch, 512},
          {"fc2 dx = dy W", false, false, kBatch, 512, 2048},
          {"fc2 dW = dy^T x", false, true, 512, kBatch, 2048},
          {"fc1 dW = dy^T x", false, true, 2048, kBatch, 512}};
}

// Products with at least this many FLOPs are compute-bound: candidates for the peak.
constexpr double kPeakCandidateFlops = 1e9;

// The best wall-clock time of `p` over `reps` runs (the first, which settles caches and the
// primitive, not counted), on cpu(0)'s compute worker with `threads` OpenMP threads: where and
// how the loop's own kernels run.
double best_product_seconds(const Product& p, int threads, int reps) {
  double best = 1e30;
  bench::on_compute_worker([&] {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const janus::ScopedOmpThreads team(threads);
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(eng);
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    auto filled = [&eng](const dnnl::memory::desc& md) {
      dnnl::memory mem(md, eng);
      auto* f = static_cast<float*>(mem.get_data_handle());
      const size_t n = md.get_size() / sizeof(float);
      for (size_t i = 0; i < n; ++i) f[i] = 0.001f * static_cast<float>(i % 7);
      return mem;
    };
    if (p.forward) {
      const dnnl::memory::desc src({p.m, p.k}, dt::f32, tag::ab),
          w({p.k, p.n}, dt::f32, dnnl::memory::dims{1, p.k}), b({1, p.n}, dt::f32, tag::ab),
          dst({p.m, p.n}, dt::f32, tag::ab);
      prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w, b, dst), eng));
      args = {{DNNL_ARG_SRC, filled(src)},
              {DNNL_ARG_WEIGHTS, filled(w)},
              {DNNL_ARG_BIAS, filled(b)},
              {DNNL_ARG_DST, filled(dst)}};
    } else {
      const dnnl::memory::desc a = p.transpose_a ? dnnl::memory::desc({p.m, p.k}, dt::f32, {1, p.m})
                                                 : dnnl::memory::desc({p.m, p.k}, dt::f32, tag::ab);
      const dnnl::memory::desc b({p.k, p.n}, dt::f32, tag::ab), c({p.m, p.n}, dt::f32, tag::ab);
      prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), eng));
      args = {{DNNL_ARG_SRC, filled(a)}, {DNNL_ARG_WEIGHTS, filled(b)}, {DNNL_ARG_DST, filled(c)}};
    }
    for (int i = 0; i <= reps; ++i) {
      const Timer timer;
      prim.execute(stream, args);
      stream.wait();
      if (i > 0) best = std::min(best, timer.seconds());
    }
  });
  return best;
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  const int threads = bench::janus_kernel_threads();
  const double square_peak = bench::sgemm_peak_gflops(threads);
  std::printf("sgemm (oneDNN, 2048^3, %d threads): %.1f GFLOP/s\n", threads, square_peak);
  // The loop's products alone, with its threads and shapes: their best rate may exceed the
  // square product's, and their times add up to the epoch's time in products.
  double peak = square_peak;
  const char* peak_source = "2048^3";
  double batch_products_s = 0;
  for (const Product& p : batch_products()) {
    const double s = best_product_seconds(p, threads, 10);
    const double gflops = p.flops() / s / 1e9;
    std::printf("  %-16s %5lld x %4lld x %4lld: %7.3f ms, %6.1f GFLOP/s\n", p.what,
                static_cast<long long>(p.m), static_cast<long long>(p.k),
                static_cast<long long>(p.n), s * 1e3, gflops);
    batch_products_s += s;
    // Layer 3's products (a million FLOPs, bound by memory) take no part in the peak: timed
    // alone for microseconds, a lucky slice of a loaded machine makes any rate of them.
    if (p.flops() >= kPeakCandidateFlops && gflops > peak) {
      peak = gflops;
      peak_source = p.what;
    }
  }
  std::printf("sgemm peak (the best of 2048^3 and the loop's large products): %.1f GFLOP/s (%s)\n",
              peak, peak_source);

  janus::seed(0);
  nn::Sequential net;
  net.add(std::make_shared<nn::Dense>(2048, "relu"), std::make_shared<nn::Dense>(512, "relu"),
          std::make_shared<nn::Dense>(1));
  net.initialize();
  janus::optim::Trainer trainer(net.collect_params(), janus::optim::make_optimizer("sgd", 0.01));
  // One batch first, so that initialisation is not counted.
  janus::wait_to_read(
      nn::L2Loss()(net(janus::random_normal(0, 1, {kBatch, 512})), janus::ones({kBatch})));

  std::printf("\n-- with a barrier (wait_to_read on the loss) after each batch\n");
  const Run with = epoch(net, trainer, true);
  std::printf("\n-- without the barrier\n");
  const Run without = epoch(net, trainer, false);

  // Forward 2*B*(512*2048 + 2048*512 + 512*1); backward: weight gradients of every layer and
  // input gradients of layers 2 and 3 (the data needs none).
  const double fwd = 2.0 * kBatch * (512.0 * 2048 + 2048.0 * 512 + 512.0);
  const double bwd =
      2.0 * kBatch * (512.0 * 2048 + 2048.0 * 512 + 512.0) + 2.0 * kBatch * (2048.0 * 512 + 512.0);
  const double gflops = (fwd + bwd) * kBatches / with.epoch_s / 1e9;
  std::printf(
      "\nthe loop: %.1f GFLOP/s with the barrier = %.0f%% of the sgemm peak; without: %.1f "
      "GFLOP/s\n",
      gflops, 100 * gflops / peak, (fwd + bwd) * kBatches / without.epoch_s / 1e9);
  std::printf("effect the seed describes (barrier bounds memory): %s\n",
              with.peak_mb <= without.peak_mb ? "holds" : "does not hold");
  const double products_s = batch_products_s * kBatches;
  std::printf(
      "the epoch's products alone, each at its best: %.3f s = %.0f%% of the epoch with the "
      "barrier; the rest (data, elementwise layers, loss, update, engine): %.3f s\n",
      products_s, 100 * products_s / with.epoch_s, with.epoch_s - products_s);
  const double floor_s = (fwd + bwd) * kBatches / (bench::compute_peak_gflops(threads) * 1e9);
  std::printf(
      "floor (compute binds: the loop's FLOPs at the compute peak): %.3f s; epoch / floor "
      "%.2f\n",
      floor_s, with.epoch_s / floor_s);
  bench::print_json_line("training_loop", {{"epoch_s", with.epoch_s},
                                           {"no_barrier_epoch_s", without.epoch_s},
                                           {"gflops", gflops},
                                           {"peak_fraction", gflops / peak},
                                           {"sgemm_peak_gflops", peak},
                                           {"square_sgemm_gflops", square_peak},
                                           {"products_s", products_s},
                                           {"floor_s", floor_s},
                                           {"floor_ratio", with.epoch_s / floor_s},
                                           {"barrier_mem_mb", with.peak_mb},
                                           {"no_barrier_mem_mb", without.peak_mb},
                                           {"barrier_rss_mb", with.rss_mb},
                                           {"no_barrier_rss_mb", without.rss_mb}});
  return 0;
}

const bench::Registration reg{
    "training_loop",
    "seed training loop (MLP 512-2048-512-1, batch 1024, 150 batches) vs sgemm peak", run};

}  // namespace
