// seed_copy_overlap: the seed's "Parallel Computation and Communication" (d2l.ai 12.3.2) on two
// logical CPU devices (no GPU here): results computed on cpu(1) are copied to cpu(0). Copies run
// on the copy lane, so copying y[i - 1] can overlap computing y[i]. Printed as the seed prints
// it: "Run on cpu(1)", "Copy to cpu(0)", then both issued together with one wait_all. On a CPU
// a copy is a memcpy, much cheaper than on PCIe, so the workload is chosen to make copies
// weigh: y[i] = dot(x, w) with x 4096x32 and w 32x256 (4 MB results, 67 MFLOP each). The effect
// holds when at least half of the copying hides behind the compute: together < run + copy / 2.
// The copy must weigh for the verdict to be robust: the hidden share is (run + copy - both) /
// copy, so the run's own variation between phases, divided by the copy's time, is its error.
// With an inner dimension of 256 a copy was 8% of its dot, and 2% of noise in the run's time
// moved the verdict by 25 points; with 32 the copy is a third of the dot or more.
#include <cstdio>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using janus::NDArray;

constexpr int64_t kInner = 32;  // the dot's inner dimension: its FLOPs per byte of result / 2

std::vector<NDArray> run_dots(const NDArray& x, const NDArray& w) {
  std::vector<NDArray> out;
  for (int i = 0; i < 10; ++i) out.push_back(janus::dot(x, w));
  return out;
}

std::vector<NDArray> copy_to_cpu0(const std::vector<NDArray>& ys) {
  std::vector<NDArray> out;
  for (const NDArray& y : ys) out.push_back(janus::copyto(y, janus::cpu(0)));
  return out;
}

int run(const bench::Options& options) {
  if (janus::hardware_cores() < 2) {
    std::printf("seed_copy_overlap: needs 2 cores, this process has %d\n", janus::hardware_cores());
    return 0;
  }
  janus::set_num_cpu_devices(2);
  janus::set_engine(janus::EngineKind::kThreaded, janus::engine_options_from_env());
  const int64_t rows = options.quick ? 512 : 4096;
  janus::seed(0);
  const janus::Device dev = janus::cpu(1);
  const NDArray x = janus::random_uniform(0, 1, {rows, kInner}, janus::DType::kFloat32, dev);
  const NDArray w = janus::random_uniform(0, 1, {kInner, 256}, janus::DType::kFloat32, dev);
  copy_to_cpu0(run_dots(x, w));  // warm-up
  janus::wait_all();

  std::vector<double> run_s, copy_s, both_s;
  for (int rep = 0; rep < 9; ++rep) {
    bench::Timer t;
    std::vector<NDArray> y = run_dots(x, w);
    janus::wait_all();
    run_s.push_back(t.seconds());
    t.reset();
    std::vector<NDArray> y_cpu = copy_to_cpu0(y);
    janus::wait_all();
    copy_s.push_back(t.seconds());
    t.reset();
    y = run_dots(x, w);
    y_cpu = copy_to_cpu0(y);
    janus::wait_all();
    both_s.push_back(t.seconds());
  }
  const double r = bench::median(run_s), c = bench::median(copy_s), b = bench::median(both_s);
  std::printf("10 x dot(%lldx%lld, %lldx256) on cpu(1), results copied to cpu(0); medians of 9\n",
              static_cast<long long>(rows), static_cast<long long>(kInner),
              static_cast<long long>(kInner));
  std::printf("Run on cpu(1): %.4f sec\nCopy to cpu(0): %.4f sec\n", r, c);
  std::printf("Run on cpu(1) and copy to cpu(0): %.4f sec\n", b);
  const bool holds = b < r + 0.5 * c;
  std::printf(
      "effect (copies overlap compute: together < run + copy / 2 = %.4f sec): %s (%.0f%% "
      "of the copy time hidden)\n",
      r + 0.5 * c, holds ? "HOLDS" : "does NOT hold", 100.0 * (r + c - b) / c);
  bench::print_json_line("seed_copy_overlap", {{"run_s", r},
                                               {"copy_s", c},
                                               {"both_s", b},
                                               {"hidden_fraction", (r + c - b) / c},
                                               {"holds", holds ? 1.0 : 0.0}});
  return 0;
}

const bench::Registration reg{"seed_copy_overlap",
                              "seed 12.3.2: copies to another device overlap the compute", run};

}  // namespace
