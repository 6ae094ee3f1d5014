// profiler_overhead: what the profiler costs, off and on, on the workload where a per-operation
// cost shows most: 20,000 tiny operators (c = a + b on 1-element arrays) and wait_all.
//
// Off: with no listener installed, an operator call does exactly two checks more than it would
// without a profiler at all (ops::invoke asks op_listener_installed() before building the
// operation's shapes, and the worker loads the listener before running the kernel). A build
// without the hook cannot run beside this one, so the check is timed on its own (100M calls)
// and set against the measured cost of one operator call: off_fraction = 2 x check / call
// (target <= 1%). On: rounds with the profiler running and stopped alternate (7 each), and
// on_fraction = median on / median off - 1. Ends with one JSON line.
#include <cstdio>
#include <vector>

#include "janus/janus.h"
#include "janus/profile/profiler.h"

#include "bench_util.h"
#include "suite.h"

namespace {

double workload_s(int calls) {
  const janus::NDArray a = janus::ones({1}), b = janus::ones({1});
  janus::wait_all();
  bench::Timer t;
  janus::NDArray c;
  for (int i = 0; i < calls; ++i) c = a + b;
  janus::wait_all();
  return t.seconds();
}

// Nanoseconds per op_listener_installed() call with no listener installed.
double check_ns(int64_t calls) {
  int64_t installed = 0;
  bench::Timer t;
  for (int64_t i = 0; i < calls; ++i) {
    installed += janus::op_listener_installed() ? 1 : 0;
    asm volatile("" : "+r"(installed));  // keep each check
  }
  const double ns = t.seconds() * 1e9 / static_cast<double>(calls);
  return installed == 0 ? ns : -1.0;
}

int run(const bench::Options& options) {
  const int calls = options.quick ? 2'000 : 20'000;
  const int rounds = options.quick ? 3 : 7;
  workload_s(calls);  // warm-up
  std::vector<double> off, on;
  for (int r = 0; r < rounds; ++r) {
    off.push_back(workload_s(calls));
    janus::profiler::start();
    on.push_back(workload_s(calls));
    janus::profiler::stop();
  }
  const double off_s = bench::median(off), on_s = bench::median(on);
  const double per_op_ns = off_s * 1e9 / calls;
  const double check = check_ns(options.quick ? 10'000'000 : 100'000'000);
  if (check < 0) {
    std::fprintf(stderr, "profiler_overhead: a listener is still installed after stop()\n");
    return 1;
  }
  const double off_fraction = 2.0 * check / per_op_ns;
  const double on_fraction = on_s / off_s - 1.0;
  std::printf("profiler_overhead: %d tiny operators per round, %d rounds each\n", calls, rounds);
  std::printf("  profiler off: %.4f s per round (%.0f ns per operator)\n", off_s, per_op_ns);
  std::printf("  profiler on:  %.4f s per round -> %+.1f%%\n", on_s, 100 * on_fraction);
  std::printf(
      "  the off path: 2 checks of %.2f ns per operator -> %.3f%% of a call (target <= "
      "1%%)\n",
      check, 100 * off_fraction);
  bench::print_json_line("profiler_overhead", {{"off_fraction", off_fraction},
                                               {"on_fraction", on_fraction},
                                               {"check_ns", check},
                                               {"per_op_ns", per_op_ns}});
  return 0;
}

const bench::Registration reg{
    "profiler_overhead", "cost of the profiler when off (per-operator checks) and when on", run};

}  // namespace
