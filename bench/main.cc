// The standalone program of one benchmark: build/bench/NAME runs the benchmark NAME of the
// suite (the name is compiled in) and always ends with its JSON line. `--quick` runs it small.
#include <cstdio>
#include <cstring>

#include "suite.h"

#ifndef JANUS_BENCH_NAME
#error "JANUS_BENCH_NAME must name the benchmark"
#endif

int main(int argc, char** argv) {
  bench::Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      options.quick = true;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s' (expected none, or --quick)\n",
                   JANUS_BENCH_NAME, argv[i]);
      return 2;
    }
  }
  const bench::Entry* entry = bench::find(JANUS_BENCH_NAME);
  if (entry == nullptr) {
    std::fprintf(stderr, "%s: not registered in the suite\n", JANUS_BENCH_NAME);
    return 2;
  }
  return bench::run(*entry, options);
}
