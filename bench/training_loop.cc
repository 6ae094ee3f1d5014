// training_loop: the seed's experiment on the memory footprint of asynchronous training
// (d2l.ai 12.2.4). An MLP 512 -> 2048 -> 512 -> 1 (ReLU) is trained with L2 loss and SGD on 150
// random batches of 1024, once with a barrier (wait_to_read on the loss) after each batch and
// once without. Printed as the seed prints it: the time at batches 50, 100 and 150 (issue time
// without the barrier), the time per epoch, and the memory growth (process RSS, as the seed's
// `ps`, and the peak of Janus' allocator). The loop's FLOPs (forward 2mnk per layer, backward
// twice that, no input gradient for the first layer) are compared with this machine's sgemm
// peak measured by a large oneDNN product (peak_fraction, the target). The floor binds
// compute: the same FLOPs at the compute peak (machine.h: one thread's sgemm rate in CPU time,
// times the threads, which load cannot deflate as it deflates the wall-clock peak); the random
// batches, the elementwise layers and the update only add time. floor_ratio = epoch with the
// barrier / floor >= 1. Ends with one JSON line.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>

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

}  // namespace

namespace {

int run(const bench::Options& options) {
  const int threads = bench::janus_kernel_threads();
  const double peak = bench::sgemm_peak_gflops(threads);
  std::printf("sgemm peak (oneDNN, 2048^3, %d threads): %.1f GFLOP/s\n", threads, peak);

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
  const double floor_s = (fwd + bwd) * kBatches / (bench::compute_peak_gflops(threads) * 1e9);
  std::printf(
      "floor (compute binds: the loop's FLOPs at the compute peak): %.3f s; epoch / floor "
      "%.2f\n",
      floor_s, with.epoch_s / floor_s);
  bench::print_json_line("training_loop", {{"epoch_s", with.epoch_s},
                                           {"no_barrier_epoch_s", without.epoch_s},
                                           {"gflops", gflops},
                                           {"peak_fraction", gflops / peak},
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
