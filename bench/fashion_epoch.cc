// fashion_mlp_epoch, fashion_lenet_epoch: one Fashion-MNIST training epoch of each demo model
// (training/models.h) through the `janus train` loop (training/train.h), with the
// hyperparameters of bench/fashion_accuracy.cc, imperative and hybridized, and the test
// accuracy after it. The two modes alternate over rounds (the order swapped each round, so that
// drift in the machine's load falls on both alike); the figures are each mode's median epoch. One
// epoch of either mode, run alone, varies by more than the modes differ for the MLP on a loaded
// 2-core machine (its kernels are the same: training_test's
// Train.MlpHybridizedStepRunsTheImperativeKernelsInFewerOperations), so one round could not say
// which mode is faster. The floor binds compute: the epoch's FLOPs (bench/flops.h: forward, weight
// gradients, and input gradients of every layer but the first, per sample, times the samples) at
// the compute peak (machine.h). The epoch also assembles batches, runs the elementwise layers and
// the optimizer, so the floor is not reachable; floor_ratio (the faster mode over the floor,
// >= 1) says how far.
// `--quick` trains on 6000 samples, one round. Ends with one JSON line: epoch_s (imperative),
// hybridized_epoch_s, time_ratio (hybridized / imperative), rounds, hybridized_faster_rounds (in
// how many rounds the hybridized epoch was the faster), test_acc, samples_per_s, floor_s,
// floor_ratio.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "flops.h"
#include "machine.h"
#include "suite.h"
#include "train.h"

namespace {

namespace training = janus::training;

constexpr int64_t kTrainSamples = 60000;

training::TrainOptions options_for(const std::string& model, bool quick) {
  training::TrainOptions o;
  o.model = model;
  o.epochs = 1;
  o.batch_size = model == "mlp" ? 256 : 128;
  o.lr = model == "mlp" ? 0.1 : 0.05;
  o.momentum = 0.9;
  o.progress = false;
  o.limit = quick ? 6000 : 0;
  return o;
}

int run_epoch(const std::string& model, const std::vector<bench::LayerMacs>& layers,
              const bench::Options& options) {
  const std::string name = "fashion_" + model + "_epoch";
  training::TrainOptions o = options_for(model, options.quick);
  std::ostringstream log;
  std::printf("%s: one epoch, batch %lld, SGD lr %g momentum %g%s\n", name.c_str(),
              static_cast<long long>(o.batch_size), o.lr, o.momentum,
              options.quick ? " (quick: 6000 samples)" : "");
  const int rounds = options.quick ? 1 : 3;
  std::vector<double> seconds[2];  // [hybridized]
  training::EpochResult last[2];
  int hybridized_faster = 0;
  for (int r = 0; r < rounds; ++r) {
    for (const bool hybridize : {r % 2 == 1, r % 2 == 0}) {
      o.hybridize = hybridize;
      last[hybridize] = training::train(o, log).back();
      seconds[hybridize].push_back(last[hybridize].seconds);
    }
    if (seconds[true].back() < seconds[false].back()) ++hybridized_faster;
  }
  const training::EpochResult& imperative = last[false];
  const training::EpochResult& hybridized = last[true];
  const double imperative_s = bench::median(seconds[false]);
  const double hybridized_s = bench::median(seconds[true]);
  std::fputs(log.str().c_str(), stdout);

  const int threads = bench::janus_kernel_threads();
  const double peak = bench::compute_peak_gflops(threads);
  const double samples = static_cast<double>(o.limit > 0 ? o.limit : kTrainSamples);
  const double flops = bench::training_flops_per_sample(layers) * samples;
  const double floor_s = flops / (peak * 1e9);
  const double floor_ratio = std::min(imperative_s, hybridized_s) / floor_s;
  std::printf(
      "epoch (median of %d alternating rounds): imperative %.3f s (%.3f-%.3f; test accuracy "
      "%.4f), hybridized %.3f s (%.3f-%.3f; %.4f); hybridized / imperative %.3f, hybridized "
      "faster in %d of %d rounds\n",
      rounds, imperative_s, bench::min_of(seconds[false]), bench::max_of(seconds[false]),
      imperative.test_acc, hybridized_s, bench::min_of(seconds[true]), bench::max_of(seconds[true]),
      hybridized.test_acc, hybridized_s / imperative_s, hybridized_faster, rounds);
  std::printf(
      "floor %.3f s (compute binds: %.2f GFLOP at the compute peak, %.1f GFLOP/s, %d threads); "
      "faster mode / floor %.2f\n",
      floor_s, flops / 1e9, peak, threads, floor_ratio);
  bench::print_json_line(name,
                         {{"epoch_s", imperative_s},
                          {"hybridized_epoch_s", hybridized_s},
                          {"time_ratio", hybridized_s / imperative_s},
                          {"rounds", static_cast<double>(rounds)},
                          {"hybridized_faster_rounds", static_cast<double>(hybridized_faster)},
                          {"test_acc", imperative.test_acc},
                          {"hybridized_test_acc", hybridized.test_acc},
                          {"samples_per_s", imperative.samples_per_s},
                          {"floor_s", floor_s},
                          {"floor_ratio", floor_ratio},
                          {"threads", static_cast<double>(threads)}});
  return 0;
}

int run_mlp(const bench::Options& options) {
  return run_epoch("mlp", bench::mlp_layers(), options);
}
int run_lenet(const bench::Options& options) {
  return run_epoch("lenet", bench::lenet_layers(), options);
}

const bench::Registration mlp_reg{
    "fashion_mlp_epoch", "one Fashion-MNIST epoch of the MLP 784-256-10, imperative and hybridized",
    run_mlp};
const bench::Registration lenet_reg{"fashion_lenet_epoch",
                                    "one Fashion-MNIST epoch of LeNet, imperative and hybridized",
                                    run_lenet};

}  // namespace
