// hybridize_mlp: the seed's experiment (d2l.ai 12.1, "Hybrid Programming"). An MLP 512 -> 256
// -> 128 -> 2 (ReLU) is called 1000 times on one 1x512 input, imperatively and hybridized,
// each timed from the first call until the engine is idle, printed as the seed prints it. The
// floor is the larger of the calls' FLOPs at this machine's sgemm peak and their weight bytes at
// its copy bandwidth (each weight is read once per call). Ends with one JSON line.
#include <cstdio>

#include "janus/janus.h"

#include "bench_util.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;
namespace nn = janus::nn;

constexpr int kCalls = 1000;

std::shared_ptr<nn::Sequential> make_net() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Dense>(256, "relu"), std::make_shared<nn::Dense>(128, "relu"),
           std::make_shared<nn::Dense>(2));
  net->initialize(nn::Xavier());
  return net;
}

// Seconds for kCalls calls, waiting for the engine at the end (the seed's npx.waitall()).
double time_calls(nn::Block& net, const NDArray& x) {
  janus::wait_all();
  Timer t;
  for (int i = 0; i < kCalls; ++i) net(x);
  janus::wait_all();
  return t.seconds();
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  janus::seed(0);
  const NDArray x = janus::random_normal(0, 1, {1, 512});
  auto net = make_net();
  net->forward(x);  // deferred initialisation

  std::vector<double> imperative, hybridized, static_alloc;
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    net->hybridize(false);
    imperative.push_back(time_calls(*net, x));
    net->hybridize(true);
    hybridized.push_back(time_calls(*net, x));
    net->hybridize(true, {.static_alloc = true, .static_shape = true});
    static_alloc.push_back(time_calls(*net, x));
  }
  const double imp_s = bench::median(imperative), hyb_s = bench::median(hybridized),
               static_s = bench::median(static_alloc);
  std::printf("Without hybridization: %.4f sec\n", imp_s);
  std::printf("With hybridization: %.4f sec\n", hyb_s);
  std::printf("With hybridization (static_alloc, static_shape): %.4f sec\n", static_s);
  std::printf("(medians of %d rounds of %d calls; traces: %lld)\n", kRounds, kCalls,
              static_cast<long long>(net->trace_count()));

  const int threads = bench::janus_kernel_threads();
  const double peak_gflops = bench::sgemm_peak_gflops(threads);
  const double bandwidth_gbs = bench::copy_bandwidth_gbs(threads);
  const double macs = 512.0 * 256 + 256.0 * 128 + 128.0 * 2;
  const double weight_bytes = 4.0 * (macs + 256 + 128 + 2);
  const double floor_us =
      std::max(2 * macs / (peak_gflops * 1e3), weight_bytes / (bandwidth_gbs * 1e3));
  const double imp_us = imp_s / kCalls * 1e6, hyb_us = std::min(hyb_s, static_s) / kCalls * 1e6;
  std::printf(
      "\nper call: imperative %.1f us, hybridized %.1f us -> speedup %.2fx (target >= 3, the "
      "seed's "
      "MXNet got 2.7x)\nfloor: %.1f us (%.0f FLOPs at %.1f GFLOP/s sgemm peak, %.0f weight bytes "
      "at %.1f GB/s copy bandwidth, %d threads) -> hybridized is %.2fx the floor (target <= 2)\n",
      imp_us, hyb_us, imp_us / hyb_us, floor_us, 2 * macs, peak_gflops, weight_bytes, bandwidth_gbs,
      threads, hyb_us / floor_us);
  bench::print_json_line("hybridize_mlp", {{"imperative_us", imp_us},
                                           {"hybridized_us", hyb_us},
                                           {"hybridized_default_us", hyb_s / kCalls * 1e6},
                                           {"speedup", imp_us / hyb_us},
                                           {"floor_us", floor_us},
                                           {"floor_ratio", hyb_us / floor_us}});
  return 0;
}

const bench::Registration reg{
    "hybridize_mlp",
    "seed MLP 512-256-128-2, batch 1, 1000 calls: imperative vs hybridized vs floor", run};

}  // namespace
