// The benchmark suite: every benchmark under a stable name, so that `janus bench NAME --json`
// and the standalone programs in build/bench/ run the same code, and results can be compared
// across versions. A benchmark registers itself in its own file:
//
//   int run(const bench::Options& options) { ...; bench::print_json_line("my_bench", {...}); }
//   const bench::Registration reg{"my_bench", "what it measures, in one line", run};
//
// It prints its figures for people, then (unless json output is off) one JSON line of numbers,
// {"bench": NAME, ...}, as its last line. It returns 0, or 1 when it could not measure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bench {

struct Options {
  /// Smaller workloads, for smoke tests: the figures are not meant to be compared.
  bool quick = false;
};

using RunFn = int (*)(const Options&);

struct Entry {
  std::string_view name;
  std::string_view summary;
  RunFn run = nullptr;
};

/// Adds a benchmark to the suite (at static initialisation).
struct Registration {
  Registration(std::string_view name, std::string_view summary, RunFn run);
};

/// Every registered benchmark, sorted by name.
std::vector<Entry> suite();
/// The benchmark called `name`, or nullptr.
const Entry* find(std::string_view name);
/// Runs one benchmark on a fresh default engine (threaded, options and CPU devices from the
/// environment) and restores that state after it; catches and prints its errors ("NAME: what").
/// Returns its exit status.
int run(const Entry& entry, const Options& options);

}  // namespace bench
