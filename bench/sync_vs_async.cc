// sync_vs_async: the experiments of d2l's "Asynchronous Computation" chapter as a benchmark,
// on the threaded engine. Each figure is the median of several repetitions (seconds):
//
//   sync_s / async_s           1000 x (y = x + 1) with y.wait_to_read() after each / once at
//                              the end (x = ones((1, 2)));
//   waitall_s / wait_to_read_s b = dot(a, a) for a 1000 x 1000 a, then wait_all / wait_to_read;
//   issue_s / finish_s         10 x (a = random_normal(0, 1, (1000, 1000)); b = dot(a, a)):
//                              clock read right after the loop / after wait_all (also alone,
//                              as the benchmark async_matmul).
//
// Ends with one JSON line.
#include <cstdio>
#include <exception>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

constexpr int kAddIters = 1000;
constexpr int kAddReps = 7;
constexpr int kWaitReps = 7;
constexpr int kDotReps = 3;

struct Figures {
  std::vector<double> sync, async, waitall, wait_to_read, issue, finish;
};

void measure_add(Figures& f) {
  const NDArray x = janus::ones({1, 2});
  janus::wait_to_read(x + 1);  // warm-up
  NDArray y;
  for (int rep = 0; rep < kAddReps; ++rep) {
    Timer t;
    for (int i = 0; i < kAddIters; ++i) {
      y = x + 1;
      janus::wait_to_read(y);
    }
    f.sync.push_back(t.seconds());

    janus::wait_all();
    t.reset();
    for (int i = 0; i < kAddIters; ++i) y = x + 1;
    janus::wait_to_read(y);
    f.async.push_back(t.seconds());
    janus::wait_all();  // the releases of the earlier y's, untimed
  }
}

void measure_wait(Figures& f) {
  const NDArray a = janus::random_normal(0, 1, {1000, 1000});
  janus::wait_to_read(janus::dot(a, a));  // warm-up (oneDNN primitive creation)
  NDArray b;
  for (int rep = 0; rep < kWaitReps; ++rep) {
    Timer t;
    b = janus::dot(a, a);
    janus::wait_all();
    f.waitall.push_back(t.seconds());

    t.reset();
    b = janus::dot(a, a);
    janus::wait_to_read(b);
    f.wait_to_read.push_back(t.seconds());
    janus::wait_all();
  }
}

void measure_issue_finish(Figures& f) {
  for (int rep = 0; rep < kDotReps; ++rep) {
    Timer t;
    NDArray a, b;
    for (int i = 0; i < 10; ++i) {
      a = janus::random_normal(0, 1, {1000, 1000});
      b = janus::dot(a, a);
    }
    f.issue.push_back(t.seconds());
    janus::wait_all();
    f.finish.push_back(t.seconds());
  }
}

void row(const char* what, const std::vector<double>& v) {
  std::printf("%-48s %10.6f %10.6f %10.6f\n", what, bench::median(v), bench::min_of(v),
              bench::mean(v));
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  try {
    janus::set_engine(janus::EngineKind::kThreaded, janus::engine_options_from_env());
    std::printf("sync_vs_async: threaded engine, %d cores\n", janus::hardware_cores());
    {
      const NDArray w = janus::random_normal(0, 1, {1000, 1000});
      janus::wait_to_read(janus::dot(w, w));  // untimed warm-up
    }
    Figures f;
    measure_add(f);
    measure_wait(f);
    measure_issue_finish(f);

    std::printf("\n%-48s %10s %10s %10s\n", "experiment (seconds)", "median", "min", "mean");
    row("synchronous: 1000 x (y = x + 1; wait_to_read)", f.sync);
    row("asynchronous: 1000 x (y = x + 1); wait_to_read", f.async);
    row("dot(a, a); wait_all", f.waitall);
    row("dot(a, a); wait_to_read", f.wait_to_read);
    row("10 x (random_normal, dot): issue", f.issue);
    row("10 x (random_normal, dot): finish (wait_all)", f.finish);

    const double sync_s = bench::median(f.sync), async_s = bench::median(f.async);
    const double waitall_s = bench::median(f.waitall);
    const double wait_to_read_s = bench::median(f.wait_to_read);
    const double issue_s = bench::median(f.issue), finish_s = bench::median(f.finish);
    std::printf(
        "\nratios: sync/async %.2f, waitall/wait_to_read %.2f, finish/issue %.0f "
        "(issue is %.3f%% of finish)\n",
        sync_s / async_s, waitall_s / wait_to_read_s, finish_s / issue_s,
        100.0 * issue_s / finish_s);
    bench::print_json_line("sync_vs_async", {{"sync_s", sync_s},
                                             {"async_s", async_s},
                                             {"waitall_s", waitall_s},
                                             {"wait_to_read_s", wait_to_read_s},
                                             {"issue_s", issue_s},
                                             {"finish_s", finish_s}});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sync_vs_async: %s\n", e.what());
    return 1;
  }
}

// async_matmul alone: the seed's "numpy vs mxnet.np" experiment (issue_s, finish_s).
int run_async_matmul(const bench::Options& options) {
  {
    const NDArray w = janus::random_normal(0, 1, {1000, 1000});
    janus::wait_to_read(janus::dot(w, w));  // untimed warm-up
  }
  Figures f;
  measure_issue_finish(f);
  std::printf("%-48s %10s %10s %10s\n", "experiment (seconds)", "median", "min", "mean");
  row("10 x (random_normal, dot): issue", f.issue);
  row("10 x (random_normal, dot): finish (wait_all)", f.finish);
  bench::print_json_line(
      "async_matmul", {{"issue_s", bench::median(f.issue)}, {"finish_s", bench::median(f.finish)}});
  return 0;
}

const bench::Registration async_matmul_reg{
    "async_matmul", "10 x (random 1000x1000, dot): time to issue vs time to finish",
    run_async_matmul};

const bench::Registration reg{
    "sync_vs_async", "1000 x (y = x + 1) with a barrier per call vs one at the end; blockers", run};

}  // namespace
