// tiny_op: one tiny operator issued 100,000 times, as a frontend loop does it: c = a + b on
// 1-element float32 arrays, each call a separate operator (shape inference, output allocation,
// engine push), then wait_all. What the framework costs per call when the kernel is nothing.
// Median of 3 rounds. `--quick`: 10,000 calls.
//
// The floor is measured in the same run, after each Janus round: the same loop as the cheapest
// asynchronous dispatch there is (handoff_floor.h): allocate the output, hand the add to a
// spinning thread through a ring, let the next call release the previous output. Its rounds are
// short (1000 calls, well inside the ring, so that some run between the interruptions of a busy
// machine, when two spinning threads fare worst) and it takes the best of 300. After each round
// it also measures the hand-off of one cache line between two cores (handoff_floor.h), which on
// a virtual machine changes with where the host runs its two CPUs (printed; engine_push has it in
// its JSON). Ends with one JSON line: total_s (for 100,000 calls), per_op_us, floor_us,
// floor_ratio.
#include <cstdio>
#include <memory>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "handoff_floor.h"
#include "suite.h"

namespace {

constexpr int kFloorCalls = 1000;
constexpr int kFloorRoundsPerRound = 100;

// Microseconds per call of `rounds` rounds of kFloorCalls dispatches of c = a + b through the
// hand-off ring, each until all have run.
std::vector<double> floor_rounds(int rounds) {
  const auto a = std::make_shared<float>(1.0f), b = std::make_shared<float>(1.0f);
  bench::HandoffRing ring;
  std::shared_ptr<float> c;
  std::vector<double> us;
  for (int r = 0; r < rounds; ++r) {
    bench::Timer t;
    for (int i = 0; i < kFloorCalls; ++i) {
      auto out = std::make_shared<float>();
      ring.push([a, b, out] { *out = *a + *b; });
      c = std::move(out);
    }
    ring.drain();
    us.push_back(t.us() / kFloorCalls);
  }
  return us;
}

int run(const bench::Options& options) {
  const int calls = options.quick ? 10'000 : 100'000;
  const janus::NDArray a = janus::ones({1}), b = janus::ones({1});
  janus::wait_to_read(a + b);  // warm-up
  std::vector<double> rounds, floor_us_per_call, handoff_ns;
  for (int r = 0; r < 3; ++r) {
    bench::Timer t;
    janus::NDArray c;
    for (int i = 0; i < calls; ++i) c = a + b;
    janus::wait_all();
    rounds.push_back(t.seconds());
    const std::vector<double> f = floor_rounds(kFloorRoundsPerRound);
    floor_us_per_call.insert(floor_us_per_call.end(), f.begin(), f.end());
    handoff_ns.push_back(bench::line_handoff_ns());
  }
  const double total_s = bench::median(rounds) * (100'000.0 / calls);
  const double per_op_us = total_s * 10.0;
  const double floor_us = bench::min_of(floor_us_per_call);
  std::printf(
      "tiny_op: %d x (c = a + b) on 1-element arrays: %.4f s (median of 3), %.2f us per "
      "call%s\nfloor: %.3f us per call (allocate the output, hand the add to a spinning thread "
      "through a ring; best of %d rounds of %d) -> %.1fx the floor; binds: the hand-off between "
      "two cores\none cache line from core to core: %.0f, %.0f and %.0f ns after the 3 rounds\n",
      calls, bench::median(rounds), per_op_us, options.quick ? " (quick)" : "", floor_us,
      3 * kFloorRoundsPerRound, kFloorCalls, per_op_us / floor_us, handoff_ns[0], handoff_ns[1],
      handoff_ns[2]);
  bench::print_json_line("tiny_op", {{"total_s", total_s},
                                     {"per_op_us", per_op_us},
                                     {"floor_us", floor_us},
                                     {"floor_ratio", per_op_us / floor_us}});
  return 0;
}

const bench::Registration reg{"tiny_op", "one tiny operator (1-element add) issued 100,000 times",
                              run};

}  // namespace
