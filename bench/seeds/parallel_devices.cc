// seed_parallel_devices: the seed's "Parallel Computation on CPUs and GPUs" (d2l.ai 12.3.1) on
// two logical CPU devices (this machine has no GPU; set_num_cpu_devices(2) splits its cores
// between cpu(0) and cpu(1), each with its own engine worker). run(x) issues 10 independent
// products x.dot(x); each device is timed alone (with wait_all between), then both are issued
// back to back with one wait_all at the end, as the seed prints it:
//   cpu(0) time: ... sec / cpu(1) time: ... sec / cpu(0) & cpu(1): ... sec
// The effect holds when both together take clearly less than the sum of the parts (< 0.8 x):
// the engine ran the two devices' work at once without being asked. Needs two cores.
#include <cstdio>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using janus::NDArray;

std::vector<NDArray> run_dots(const NDArray& x) {
  std::vector<NDArray> out;
  for (int i = 0; i < 10; ++i) out.push_back(janus::dot(x, x));
  return out;
}

int run(const bench::Options& options) {
  if (janus::hardware_cores() < 2) {
    std::printf("seed_parallel_devices: needs 2 cores, this process has %d\n",
                janus::hardware_cores());
    return 0;
  }
  janus::set_num_cpu_devices(2);
  janus::set_engine(janus::EngineKind::kThreaded, janus::engine_options_from_env());
  const int64_t n = options.quick ? 256 : 1000;
  janus::seed(0);
  const NDArray x0 = janus::random_uniform(0, 1, {n, n}, janus::DType::kFloat32, janus::cpu(0));
  const NDArray x1 = janus::random_uniform(0, 1, {n, n}, janus::DType::kFloat32, janus::cpu(1));
  run_dots(x0);  // warm up both devices
  run_dots(x1);
  janus::wait_all();

  std::vector<double> t0, t1, both;
  for (int rep = 0; rep < 3; ++rep) {
    bench::Timer t;
    run_dots(x0);
    janus::wait_all();
    t0.push_back(t.seconds());
    t.reset();
    run_dots(x1);
    janus::wait_all();
    t1.push_back(t.seconds());
    t.reset();
    run_dots(x0);
    run_dots(x1);
    janus::wait_all();
    both.push_back(t.seconds());
  }
  const double a = bench::median(t0), b = bench::median(t1), ab = bench::median(both);
  std::printf("10 x dot of %lldx%lld on each device, medians of 3\n", static_cast<long long>(n),
              static_cast<long long>(n));
  std::printf("cpu(0) time: %.4f sec\ncpu(1) time: %.4f sec\ncpu(0) & cpu(1): %.4f sec\n", a, b,
              ab);
  const bool holds = ab < 0.8 * (a + b);
  std::printf(
      "effect (both devices at once take less than the sum of the parts): %s (%.2f of the "
      "sum)\n",
      holds ? "HOLDS" : "does NOT hold", ab / (a + b));
  bench::print_json_line("seed_parallel_devices", {{"cpu0_s", a},
                                                   {"cpu1_s", b},
                                                   {"both_s", ab},
                                                   {"fraction_of_sum", ab / (a + b)},
                                                   {"holds", holds ? 1.0 : 0.0}});
  return 0;
}

const bench::Registration reg{"seed_parallel_devices",
                              "seed 12.3.1: independent work on two devices runs at once", run};

}  // namespace
