// idle_latency: does a call that follows an idle spell take longer than one in a back-to-back
// stream? A model server's requests come with gaps, and between them the engine's worker and
// its OpenMP team go to sleep; where the OS wakes them decides the next calls' speed. The
// MXNet 1.9.1 exports of the seed MLP (at batch 64: its products run on the whole team) and
// LeNet (at batch 1: every kernel on one thread) run through deploy::Predictor, each call
// waited for, in rounds of kCalls calls. A round starts either straight after the one before
// (stream) or after a gap of 25, 50 or 100 ms, the gaps in turn; twice a phase of each kind, so
// that a slow spell of the machine is less likely to fall on one kind only. Per case and gap,
// the median round; ratio = the slowest gap's / the stream's. An idle spell should cost the
// first call a wake-up and the others nothing, so the ratio should be near 1. No floor: the
// bench compares Janus with itself. Ends with one JSON line: per case stream_us, idle25_us,
// idle50_us, idle100_us and ratio, and `ratio`, the worse case's.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "janus/graph/npy.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

struct Case {
  const char* model;
  int batch;
};
constexpr Case kCases[] = {{"mlp", 64}, {"lenet", 1}};  // the JSON line's order
constexpr int kCalls = 100;
constexpr int kIdleMs[] = {25, 50, 100};  // the gaps before idle rounds

std::string fixture(const std::string& model) {
  return std::string(JANUS_SOURCE_DIR) + "/tests/fixtures/mxnet/legacy/" + model;
}

// Microseconds per call over a round of `calls` waited calls.
double round_us(janus::deploy::Predictor& p, const janus::NDArray& x, int calls) {
  bench::Timer t;
  for (int i = 0; i < calls; ++i) janus::wait_to_read(p.run(x));
  return t.us() / calls;
}

int run(const bench::Options& options) {
  const int rounds = options.quick ? 1 : 5;  // per phase: stream rounds, and idle rounds per gap
  std::printf(
      "idle_latency: %d calls per round, waited; twice %d rounds straight after each "
      "other, then %d after each gap of 25, 50 and 100 ms, in turn\n",
      kCalls, 3 * rounds, rounds);
  std::printf("%-6s %5s %10s %10s %10s %10s %7s\n", "model", "batch", "stream us", "25 ms us",
              "50 ms us", "100 ms us", "ratio");
  constexpr size_t kGaps = std::size(kIdleMs);
  struct Result {
    double stream_us;
    std::array<double, kGaps> idle_us;  // by gap
    double ratio;                       // the slowest gap's / the stream's
  };
  std::vector<Result> results;
  for (const Case& c : kCases) {
    janus::deploy::Predictor p(fixture(c.model) + "-symbol.json",
                               fixture(c.model) + "-0000.params");
    const janus::NDArray one = janus::graph::load_npy(fixture(c.model) + "-input.npy");
    std::vector<int64_t> dims = one.shape().dims();
    dims[0] = c.batch;
    const janus::NDArray x = janus::broadcast_to(one, janus::Shape(dims));
    round_us(p, x, kCalls);  // compiles, and warms the caches
    std::vector<double> stream;
    std::array<std::vector<double>, kGaps> idle;
    for (int phase = 0; phase < 2; ++phase) {
      // A round right after an idle one still runs where the OS put the threads on waking
      // (for milliseconds): the stream's timed rounds come after untimed ones.
      for (int r = 0; r < 3; ++r) round_us(p, x, kCalls);
      for (int r = 0; r < 3 * rounds; ++r) stream.push_back(round_us(p, x, kCalls));
      for (int r = 0; r < rounds; ++r) {
        for (size_t g = 0; g < kGaps; ++g) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs[g]));
          idle[g].push_back(round_us(p, x, kCalls));
        }
      }
    }
    Result r{bench::median(stream), {}, 0};
    for (size_t g = 0; g < kGaps; ++g) {
      r.idle_us[g] = bench::median(idle[g]);
      r.ratio = std::max(r.ratio, r.idle_us[g] / r.stream_us);
    }
    std::printf("%-6s %5d %10.1f %10.1f %10.1f %10.1f %7.2f\n", c.model, c.batch, r.stream_us,
                r.idle_us[0], r.idle_us[1], r.idle_us[2], r.ratio);
    results.push_back(r);
  }
  const Result& mlp = results[0];
  const Result& lenet = results[1];
  const double worst = std::max(mlp.ratio, lenet.ratio);
  std::printf(
      "ratio (the slowest gap's calls / the stream's, the worse model): %.2f (near 1: an "
      "idle spell costs nothing)\n",
      worst);
  bench::print_json_line("idle_latency", {{"ratio", worst},
                                          {"mlp_b64_stream_us", mlp.stream_us},
                                          {"mlp_b64_idle25_us", mlp.idle_us[0]},
                                          {"mlp_b64_idle50_us", mlp.idle_us[1]},
                                          {"mlp_b64_idle100_us", mlp.idle_us[2]},
                                          {"mlp_b64_ratio", mlp.ratio},
                                          {"lenet_b1_stream_us", lenet.stream_us},
                                          {"lenet_b1_idle25_us", lenet.idle_us[0]},
                                          {"lenet_b1_idle50_us", lenet.idle_us[1]},
                                          {"lenet_b1_idle100_us", lenet.idle_us[2]},
                                          {"lenet_b1_ratio", lenet.ratio}});
  return 0;
}

const bench::Registration reg{
    "idle_latency", "Predictor calls after 25-100 ms idle vs in a back-to-back stream", run};

}  // namespace
