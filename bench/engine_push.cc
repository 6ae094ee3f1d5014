// engine_push: what it costs to push one operation, on the naive and the threaded engine.
//
//   (i)   an empty kernel pushed straight through janus::engine().push, writing one var (a
//         pool of vars, one per push of a batch) and with no vars at all;
//   (ii)  a tiny add of two 1-element arrays through the operator API (janus::add), which also
//         allocates the output and releases the previous one;
//   (iii) throughput: a dependent chain of tiny kernels that all write the same var, and as
//         many independent ones that each write their own var (pushes, then wait_all).
//
// Per-push costs are timed in batches (kBatchSize pushes per batch; the engine is drained,
// untimed, between batches so back-pressure never engages) and reported as the median and the
// mean of the per-batch means.
//
// The floor, measured the same way but reported as the best batch: the cheapest asynchronous
// dispatch of one operation (handoff_floor.h: the kernel's closure built in a slot of a ring
// that a spinning thread drains), per push of an empty kernel and per tiny add (which also
// allocates its output).
//
// The hand-off of one cache line between two cores (handoff_floor.h) is measured before and
// after the threaded engine's measurements and after the floor's: on a virtual machine it
// changes with where the host runs its two CPUs (about 30 or 150 ns on the 2-CPU development
// machine), and a threaded push pays several such hand-offs (the worker's queue, the input
// vars' queues, reference counts, the count of operations in flight), so the push cost follows.
// Ends with one JSON line.
#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "handoff_floor.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::Engine;
using janus::EngineKind;
using janus::NDArray;
using janus::RunContext;
using janus::Var;

constexpr int kBatchSize = 1000;
constexpr int kBatches = 200;
constexpr int kThroughputOps = 200'000;
constexpr int kOpApiChainOps = 50'000;

struct PerPush {
  double median_us = 0.0;
  double mean_us = 0.0;
};

// Runs `batches` batches of kBatchSize calls of `push_one(i)` (i in [0, kBatchSize)), after one
// untimed warm-up batch; wait_all after each batch is not timed.
template <typename F>
PerPush time_batches(int batches, F&& push_one) {
  std::vector<double> per_push_us;
  per_push_us.reserve(static_cast<size_t>(batches));
  for (int b = -1; b < batches; ++b) {
    Timer t;
    for (int i = 0; i < kBatchSize; ++i) push_one(i);
    const double us = t.us() / kBatchSize;
    janus::wait_all();
    if (b >= 0) per_push_us.push_back(us);
  }
  return PerPush{bench::median(per_push_us), bench::mean(per_push_us)};
}

// The floor's per-push costs (best batch, us): an empty kernel, and a 1-element add that
// allocates its output.
struct Floor {
  double empty_us = 0;
  double tiny_add_us = 0;
};

Floor measure_floor() {
  bench::HandoffRing ring;
  auto batches = [&ring](auto&& push_one) {
    std::vector<double> per_push_us;
    for (int b = -1; b < kBatches; ++b) {
      Timer t;
      for (int i = 0; i < kBatchSize; ++i) push_one();
      const double us = t.us() / kBatchSize;
      ring.drain();
      if (b >= 0) per_push_us.push_back(us);
    }
    return bench::min_of(per_push_us);
  };
  Floor f;
  f.empty_us = batches([&ring] { ring.push([] {}); });
  const auto a = std::make_shared<float>(1.0f), b = std::make_shared<float>(2.0f);
  std::shared_ptr<float> c;
  f.tiny_add_us = batches([&] {
    auto out = std::make_shared<float>();
    ring.push([a, b, out] { *out = *a + *b; });
    c = std::move(out);
  });
  return f;
}

struct Throughput {
  double ops_per_s = 0.0;
  double issue_s = 0.0;  // time until the last push returned
  double total_s = 0.0;  // time until wait_all returned
};

struct Results {
  PerPush empty_one_var;
  PerPush empty_no_vars;
  PerPush tiny_add;
  Throughput chain;
  Throughput independent;
  Throughput op_api_chain;
};

bool check_count(const char* what, int64_t got, int64_t expected) {
  if (got == expected) return true;
  std::fprintf(stderr, "engine_push: %s ran %lld kernels, expected %lld\n", what,
               static_cast<long long>(got), static_cast<long long>(expected));
  return false;
}

// Measures everything on the current global engine. Returns false when a kernel count is off
// (an engine bug, not a timing matter).
bool measure(Results& r) {
  Engine& e = janus::engine();
  const janus::Device dev = janus::cpu();
  const auto empty_kernel = [](const RunContext&) {};
  bool ok = true;

  // (i) Empty kernel, one written var per push.
  {
    std::vector<Var*> vars(kBatchSize);
    for (auto& v : vars) v = e.new_var();
    r.empty_one_var = time_batches(
        kBatches, [&](int i) { e.push(empty_kernel, {}, {vars[static_cast<size_t>(i)]}, dev); });
    for (Var* v : vars) e.delete_var(v, {});
  }
  // (i) Empty kernel, no vars.
  r.empty_no_vars = time_batches(kBatches, [&](int) { e.push(empty_kernel, {}, {}, dev); });

  // (ii) Tiny add through the operator API.
  {
    const NDArray a = janus::from_vector<float>({1.0f}, {1});
    const NDArray b = janus::from_vector<float>({2.0f}, {1});
    NDArray c;
    r.tiny_add = time_batches(kBatches, [&](int) { c = janus::add(a, b); });
    const float v = janus::item<float>(c);
    if (v != 3.0f) {
      std::fprintf(stderr, "engine_push: add(1, 2) gave %g\n", static_cast<double>(v));
      ok = false;
    }
  }

  // (iii) Dependent chain: every kernel writes the same var, so they run one after another.
  {
    std::atomic<int64_t> count{0};
    auto bump = [&count](const RunContext&) { count.fetch_add(1, std::memory_order_relaxed); };
    Var* v = e.new_var();
    e.push(bump, {}, {v}, dev);  // warm-up
    e.wait_all();
    count = 0;
    Timer t;
    for (int i = 0; i < kThroughputOps; ++i) e.push(bump, {}, {v}, dev);
    r.chain.issue_s = t.seconds();
    e.wait_all();
    r.chain.total_s = t.seconds();
    r.chain.ops_per_s = kThroughputOps / r.chain.total_s;
    e.delete_var(v, {});
    ok &= check_count("the dependent chain", count.load(), kThroughputOps);
  }

  // (iii) Independent operations: each writes its own var (created beforehand, untimed).
  {
    std::atomic<int64_t> count{0};
    auto bump = [&count](const RunContext&) { count.fetch_add(1, std::memory_order_relaxed); };
    std::vector<Var*> vars(kThroughputOps);
    for (auto& v : vars) v = e.new_var();
    Timer t;
    for (Var* v : vars) e.push(bump, {}, {v}, dev);
    r.independent.issue_s = t.seconds();
    e.wait_all();
    r.independent.total_s = t.seconds();
    r.independent.ops_per_s = kThroughputOps / r.independent.total_s;
    for (Var* v : vars) e.delete_var(v, {});
    ok &= check_count("the independent operations", count.load(), kThroughputOps);
  }

  // Operator-API dependent chain: x = x + 1 (each op reads the previous result).
  {
    NDArray x = janus::zeros({1});
    janus::wait_all();
    Timer t;
    for (int i = 0; i < kOpApiChainOps; ++i) x = x + 1;
    r.op_api_chain.issue_s = t.seconds();
    janus::wait_all();
    r.op_api_chain.total_s = t.seconds();
    r.op_api_chain.ops_per_s = kOpApiChainOps / r.op_api_chain.total_s;
    const float v = janus::item<float>(x);
    if (v != static_cast<float>(kOpApiChainOps)) {
      std::fprintf(stderr, "engine_push: x = x + 1 (%d times) gave %g\n", kOpApiChainOps,
                   static_cast<double>(v));
      ok = false;
    }
  }
  return ok;
}

void print_per_push(const char* what, const PerPush& t, const PerPush& n) {
  std::printf("%-44s %10.3f %10.3f %10.3f %10.3f\n", what, t.median_us, t.mean_us, n.median_us,
              n.mean_us);
}

void print_throughput(const char* what, const Throughput& t, const Throughput& n) {
  std::printf("%-44s %12.0f %10.4f %10.4f %12.0f %10.4f\n", what, t.ops_per_s, t.issue_s, t.total_s,
              n.ops_per_s, n.total_s);
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  try {
    std::printf(
        "engine_push: %d cores, batches of %d pushes x %d batches, %d ops for "
        "throughput\n",
        janus::hardware_cores(), kBatchSize, kBatches, kThroughputOps);
    Results threaded, naive;
    bool ok = true;
    std::vector<double> handoff_ns{bench::line_handoff_ns()};
    janus::set_engine(EngineKind::kThreaded, janus::engine_options_from_env());
    ok &= measure(threaded);
    handoff_ns.push_back(bench::line_handoff_ns());
    janus::set_engine(EngineKind::kNaive, janus::engine_options_from_env());
    ok &= measure(naive);
    janus::set_engine(EngineKind::kThreaded, janus::engine_options_from_env());
    const Floor floor = measure_floor();
    handoff_ns.push_back(bench::line_handoff_ns());

    std::printf("\nper push, us (median and mean of per-batch means)\n");
    std::printf("%-44s %10s %10s %10s %10s\n", "operation", "thr med", "thr mean", "naive med",
                "naive mean");
    print_per_push("empty kernel, 1 written var (engine().push)", threaded.empty_one_var,
                   naive.empty_one_var);
    print_per_push("empty kernel, no vars (engine().push)", threaded.empty_no_vars,
                   naive.empty_no_vars);
    print_per_push("tiny add, 1-element arrays (janus::add)", threaded.tiny_add, naive.tiny_add);
    std::printf("%-44s %10.3f (best batch)\n", "floor: empty kernel through a ring",
                floor.empty_us);
    std::printf("%-44s %10.3f (best batch)\n", "floor: tiny add through a ring", floor.tiny_add_us);
    std::printf("%-44s %4.0f, %4.0f, %4.0f (before, after the threaded engine, after the floor)\n",
                "one cache line from core to core, ns", handoff_ns[0], handoff_ns[1],
                handoff_ns[2]);

    std::printf("\nthroughput (pushes, then wait_all)\n");
    std::printf("%-44s %12s %10s %10s %12s %10s\n", "workload", "thr ops/s", "thr issue",
                "thr total", "naive ops/s", "naive tot");
    print_throughput("dependent chain, 200k tiny kernels, 1 var", threaded.chain, naive.chain);
    print_throughput("independent, 200k tiny kernels, own vars", threaded.independent,
                     naive.independent);
    print_throughput("op-API chain, 50k x (x = x + 1)", threaded.op_api_chain, naive.op_api_chain);
    std::printf(
        "\nthreaded vs targets: tiny add %.3f us per push (target 0.5; %.1fx the floor), empty "
        "kernel %.1fx the floor, chain %.0f ops/s (target 500000); threaded/naive tiny add ratio "
        "%.2f; binds: the hand-off between two cores and the allocations\n",
        threaded.tiny_add.median_us, threaded.tiny_add.median_us / floor.tiny_add_us,
        threaded.empty_one_var.median_us / floor.empty_us, threaded.chain.ops_per_s,
        threaded.tiny_add.median_us / naive.tiny_add.median_us);
    if (!ok) {
      std::fprintf(stderr, "engine_push: a correctness check failed (see above)\n");
      return 1;
    }
    bench::print_json_line("engine_push",
                           {{"push_us", threaded.tiny_add.median_us},
                            {"push_empty_us", threaded.empty_one_var.median_us},
                            {"naive_push_us", naive.tiny_add.median_us},
                            {"chain_ops_per_s", threaded.chain.ops_per_s},
                            {"independent_ops_per_s", threaded.independent.ops_per_s},
                            {"floor_push_us", floor.tiny_add_us},
                            {"floor_ratio", threaded.tiny_add.median_us / floor.tiny_add_us},
                            {"floor_push_empty_us", floor.empty_us},
                            {"line_handoff_ns", bench::median(handoff_ns)},
                            {"target_push_us", 0.5},
                            {"target_chain_ops_per_s", 500000.0}});
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_push: %s\n", e.what());
    return 1;
  }
}

const bench::Registration reg{
    "engine_push", "cost of pushing one tiny operator (push_us) and dependent-chain throughput",
    run};

}  // namespace
