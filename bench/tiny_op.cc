// tiny_op: one tiny operator issued 100,000 times, as a frontend loop does it: c = a + b on
// 1-element float32 arrays, each call a separate operator (shape inference, output allocation,
// engine push), then wait_all. What the framework costs per call when the kernel is nothing.
// Median of 3 rounds. `--quick`: 10,000 calls. Ends with one JSON line: total_s (for 100,000
// calls), per_op_us.
#include <cstdio>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

int run(const bench::Options& options) {
  const int calls = options.quick ? 10'000 : 100'000;
  const janus::NDArray a = janus::ones({1}), b = janus::ones({1});
  janus::wait_to_read(a + b);  // warm-up
  std::vector<double> rounds;
  for (int r = 0; r < 3; ++r) {
    bench::Timer t;
    janus::NDArray c;
    for (int i = 0; i < calls; ++i) c = a + b;
    janus::wait_all();
    rounds.push_back(t.seconds());
  }
  const double total_s = bench::median(rounds) * (100'000.0 / calls);
  std::printf(
      "tiny_op: %d x (c = a + b) on 1-element arrays: %.4f s (median of 3), %.2f us per "
      "call%s\n",
      calls, bench::median(rounds), total_s * 10.0, options.quick ? " (quick)" : "");
  bench::print_json_line("tiny_op", {{"total_s", total_s}, {"per_op_us", total_s * 10.0}});
  return 0;
}

const bench::Registration reg{"tiny_op", "one tiny operator (1-element add) issued 100,000 times",
                              run};

}  // namespace
