// seed_async: the experiments of d2l's "Asynchronous Computation" chapter (12.2.1-12.2.3), run
// on Janus (the first part of `make demo`).
//
// Operator calls return as soon as the operation is queued on the dependency engine; the
// engine's worker threads compute in the background. Blockers (printing, wait_to_read, item,
// to_vector, wait_all) make the frontend wait for the values they need.
//
// Sections: (a) the dependency graph of z = x * y + 2; (b) issuing 10 x (random 1000x1000,
// dot) versus finishing them; (c) 1000 x (y = x + 1) synchronously versus asynchronously;
// (d) wait_all versus wait_to_read (and an implicit blocker) for one dot. Ends with a verdict.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

int64_t pushed() { return janus::engine().stats().pushed; }

// True when operator calls return before their work is done (the threaded engine).
bool asynchronous_engine() { return janus::engine().kind() != janus::EngineKind::kNaive; }

void section(const char* title) { std::printf("\n== %s\n", title); }

// (a) Fig. 12.2.2: three statements only queue work; printing z waits for it.
void dependency_graph() {
  section("(a) Dependency graph: x = ones((1, 2)); y = ones((1, 2)); z = x * y + 2; print(z)");
  const int64_t before = pushed();
  Timer t;
  NDArray x = janus::ones({1, 2});
  NDArray y = janus::ones({1, 2});
  NDArray z = x * y + 2;
  const double issue_us = t.us();
  const int64_t n = pushed() - before;
  std::printf("issued %lld operations (ones, ones, mul, add_scalar) in %.1f us; %s\n",
              static_cast<long long>(n), issue_us,
              asynchronous_engine() ? "the frontend did not wait for any of them"
                                    : "the naive engine ran each of them inside the call");
  t.reset();
  std::cout << "z = " << z << std::endl;  // a blocker: waits for z, then prints
  std::printf(
      "printing z is a blocker: it waited for x, y, x * y and z (%.1f us) and shows "
      "[[3., 3.]] as in the seed\n",
      t.us());
}

struct IssueFinish {
  double issue_s = 0.0;
  double finish_s = 0.0;
};

// 10 x (a = random_normal(0, 1, (1000, 1000)); b = dot(a, a)).
IssueFinish random_dot_loop(bool print_memory) {
  Timer t;
  NDArray a, b;
  for (int i = 0; i < 10; ++i) {
    a = janus::random_normal(0, 1, {1000, 1000});
    b = janus::dot(a, a);
  }
  IssueFinish r;
  r.issue_s = t.seconds();  // clock read right after the loop: only the issuing is timed
  const int64_t queued_bytes = janus::memory_stats(janus::cpu()).bytes_in_use;
  janus::wait_all();
  r.finish_s = t.seconds();
  if (print_memory) {
    std::printf("  memory in use right after issuing: %.1f MiB%s\n", mib(queued_bytes),
                asynchronous_engine() ? " (the arrays of every iteration stay allocated until "
                                        "their pending operations have run)"
                                      : "");
    std::printf("  memory in use after wait_all:      %.1f MiB\n",
                mib(janus::memory_stats(janus::cpu()).bytes_in_use));
  }
  return r;
}

// (b) Section 12.2.1: issuing is fast, computing is not.
IssueFinish issue_versus_finish() {
  section(
      "(b) Asynchrony via backend: 10 x (a = random_normal(0, 1, (1000, 1000)); "
      "b = dot(a, a))");
  const janus::EngineKind kind = janus::engine().kind();
  const std::string name(janus::engine_kind_name(kind));
  IssueFinish r = random_dot_loop(/*print_memory=*/true);
  std::printf("janus (%s engine), time to issue: %.4f sec (%.0f us)\n", name.c_str(), r.issue_s,
              r.issue_s * 1e6);
  std::printf("Done (after janus::wait_all()):         %.4f sec\n", r.finish_s);
  std::printf(
      "issuing took %.2f%% of the total; the engine computed in the background for the "
      "remaining %.4f sec\n",
      100.0 * r.issue_s / r.finish_s, r.finish_s - r.issue_s);

  // The synchronous baseline, like the seed's NumPy line: the naive engine runs every
  // operation before the call returns, so issuing *is* finishing.
  if (kind != janus::EngineKind::kNaive) {
    janus::set_engine(janus::EngineKind::kNaive, janus::engine_options_from_env());
    {
      const NDArray w = janus::random_normal(0, 1, {1000, 1000});
      janus::wait_to_read(janus::dot(w, w));
    }
    const IssueFinish naive = random_dot_loop(/*print_memory=*/false);
    janus::set_engine(kind, janus::engine_options_from_env());
    {
      const NDArray w = janus::random_normal(0, 1, {1000, 1000});
      janus::wait_to_read(janus::dot(w, w));  // warm the restored engine's workers again
    }
    std::printf(
        "for comparison, the naive (synchronous, NumPy-like) engine: issue %.4f sec, "
        "done %.4f sec\n",
        naive.issue_s, naive.finish_s);
  }
  return r;
}

// (c) Section 12.2.3: a barrier after every y = x + 1 versus one at the end.
void sync_versus_async() {
  section("(c) Improving computation: 1000 x (y = x + 1)");
  NDArray x = janus::ones({1, 2});
  janus::wait_to_read(x + 1);  // warm up the add_scalar operator

  Timer t;
  NDArray y;
  for (int i = 0; i < 1000; ++i) {
    y = x + 1;
    janus::wait_to_read(y);
  }
  const double sync_s = t.seconds();

  t.reset();
  for (int i = 0; i < 1000; ++i) y = x + 1;
  janus::wait_to_read(y);
  const double async_s = t.seconds();

  std::printf("synchronous  (y.wait_to_read() after each): %.4f sec (%.1f us per iteration)\n",
              sync_s, sync_s * 1e3);
  std::printf("asynchronous (y.wait_to_read() once):       %.4f sec (%.1f us per iteration)\n",
              async_s, async_s * 1e3);
  if (asynchronous_engine()) {
    std::printf(
        "asynchronous is %.1fx faster: the frontend queues the next addition while the "
        "engine runs the previous one (t1 + 1000 t2 + t3 instead of 1000 (t1 + t2 + t3))\n",
        sync_s / async_s);
  } else {
    std::printf(
        "ratio %.1fx: the naive engine computes inside every call, so both loops do the "
        "same work\n",
        sync_s / async_s);
  }
  std::cout << "y = " << y << std::endl;
}

// (d) Section 12.2.2: barriers and blockers.
void barriers_and_blockers() {
  section("(d) Barriers and blockers: b = dot(a, a) for a 1000 x 1000 a");
  NDArray a = janus::random_normal(0, 1, {1000, 1000});
  janus::wait_to_read(a);

  Timer t;
  NDArray b = janus::dot(a, a);
  janus::wait_all();
  const double waitall_s = t.seconds();

  t.reset();
  b = janus::dot(a, a);
  janus::wait_to_read(b);
  const double wait_to_read_s = t.seconds();

  t.reset();
  b = janus::dot(a, a);
  const std::vector<float> host = janus::to_vector<float>(b);
  const double to_vector_s = t.seconds();

  std::printf("waitall:      %.4f sec\n", waitall_s);
  std::printf("wait_to_read: %.4f sec\n", wait_to_read_s);
  std::printf("to_vector (an implicit blocker, like asnumpy): %.4f sec (%zu values)\n", to_vector_s,
              host.size());
  std::printf(
      "wait_all and wait_to_read take about the same time here (ratio %.2f): only one "
      "operation was pending\n",
      waitall_s / wait_to_read_s);
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  try {
    Timer total;
    std::printf("Janus asynchronous computation demo (engine: %s, %d cores)\n",
                std::string(janus::engine_kind_name(janus::engine().kind())).c_str(),
                janus::hardware_cores());

    // Warm-up, untimed: creates the engine's workers and the oneDNN primitive of the dot.
    {
      NDArray w = janus::random_normal(0, 1, {1000, 1000});
      janus::wait_to_read(janus::dot(w, w));
    }

    dependency_graph();
    const IssueFinish r = issue_versus_finish();
    sync_versus_async();
    barriers_and_blockers();

    const bool held = r.issue_s * 10.0 < r.finish_s;
    std::printf(
        "\nVerdict: issue time << finish time %s (issue %.4f sec vs finish %.4f sec, "
        "%.0fx) -- total run %.2f sec\n",
        held ? "HELD" : "did NOT hold", r.issue_s, r.finish_s, r.finish_s / r.issue_s,
        total.seconds());
    bench::print_json_line(
        "seed_async",
        {{"issue_s", r.issue_s}, {"finish_s", r.finish_s}, {"holds", held ? 1.0 : 0.0}});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seed_async: %s\n", e.what());
    return 1;
  }
}

const bench::Registration reg{
    "seed_async", "seed 12.2: issue vs finish, blockers, synchronous vs asynchronous", run};

}  // namespace
