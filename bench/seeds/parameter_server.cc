// seed_parameter_server: the seed's "Parameter Servers" (d2l.ai 12.7), measured. The time to
// synchronize (sum across 2 worker processes and give the sum back to both) the gradients of
// a model of 1 MB to 256 MB, three ways:
//   ring      dist_allreduce: Gloo's ring allreduce between the 2 workers, no server
//   1 server  dist_sync with S=1: both workers push to and pull from one server
//   2 servers dist_sync with S=2: each array split in two, half to each server
// The seed: one server's link carries every worker's gradient in and every worker's weights
// out (2 x W x model bytes) and is the bottleneck as W grows; the ring's per-worker traffic is
// 2 (W-1)/W x model bytes whatever W; several servers split the server side's traffic (each
// carries 2 x W x model / S), which is how parameter servers scale their bandwidth.
//
// The benchmark starts its own processes: it re-executes this program (/proc/self/exe with the
// same arguments, so `janus bench seed_parameter_server` and build/bench/bench_seed_parameter_
// server both work) with JANUS_PS_BENCH_CHILD set and JANUS_RANK etc. of each role; worker 0
// writes its timings to a file that the parent reads.
#include "janus/dist/parameter_server.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "janus/dist/free_port.h"
#include "janus/janus.h"
#include "janus/optim/kvstore.h"

#include "bench_util.h"
#include "self_job.h"
#include "suite.h"

namespace {

using janus::NDArray;

struct Config {
  const char* label;
  const char* kind;
  int servers;
};
constexpr Config kConfigs[] = {
    {"ring", "dist_allreduce", 0}, {"1 server", "dist_sync", 1}, {"2 servers", "dist_sync", 2}};
constexpr int kWorkers = 2;

std::vector<int64_t> sizes_mb(const bench::Options& options) {
  if (options.quick) return {1, 16, 64};
  return {1, 4, 16, 64, 256};
}

// ---- a child: a worker or a server of one configuration ----

int run_child(const bench::Options& options) {
  if (janus::dist::maybe_run_server()) return 0;
  const char* kind = std::getenv("JANUS_PS_BENCH_KIND");
  const char* out_path = std::getenv("JANUS_PS_BENCH_OUT");
  auto kv = janus::kvstore::create(kind);
  const int reps = options.quick ? 3 : 5;
  std::ostringstream out;
  int key = 0;
  for (const int64_t mb : sizes_mb(options)) {
    const int64_t n = mb * (int64_t{1} << 20) / 4;  // float32
    kv->init(key, janus::zeros({n}));
    NDArray g = janus::ones({n});
    std::vector<double> times;
    for (int rep = 0; rep <= reps; ++rep) {  // the first is a warm-up
      janus::wait_to_read(g);
      bench::Timer t;
      kv->pushpull(key, std::span<const NDArray>(&g, 1), std::span<const NDArray>(&g, 1));
      janus::wait_to_read(g);
      if (rep > 0) times.push_back(t.seconds());
    }
    out << mb << ' ' << bench::median(times) << '\n';
    ++key;
  }
  if (kv->rank() == 0) std::ofstream(out_path) << out.str();
  return 0;
}

// ---- the parent: starts each configuration's processes and prints the table ----

// Runs one configuration; returns worker 0's (size MB, seconds) lines, empty on failure.
std::vector<std::pair<int64_t, double>> run_config(const Config& c, int timeout_s) {
  const std::string out_path =
      (std::filesystem::temp_directory_path() /
       ("janus_ps_bench_" + std::to_string(::getpid()) + "_" + std::to_string(c.servers)))
          .string();
  std::filesystem::remove(out_path);
  const int world = kWorkers + c.servers;
  const int port = janus::dist::free_loopback_port();
  std::vector<bench::Variables> processes;
  for (int r = 0; r < world; ++r) {
    bench::Variables v = bench::rank_variables(r, kWorkers, c.servers, port);
    v.insert(v.end(), {{"JANUS_PS_BENCH_CHILD", "1"},
                       {"JANUS_PS_BENCH_KIND", c.kind},
                       {"JANUS_PS_BENCH_OUT", out_path}});
    processes.push_back(std::move(v));
  }
  const bool ok = bench::run_self_job(processes, timeout_s, "seed_parameter_server");
  std::vector<std::pair<int64_t, double>> rows;
  std::ifstream in(out_path);
  int64_t mb = 0;
  double s = 0;
  while (in >> mb >> s) rows.emplace_back(mb, s);
  std::filesystem::remove(out_path);
  if (!ok) std::fprintf(stderr, "seed_parameter_server: a process of '%s' failed\n", c.label);
  return ok ? rows : std::vector<std::pair<int64_t, double>>{};
}

int run(const bench::Options& options) {
  if (std::getenv("JANUS_PS_BENCH_CHILD") != nullptr) return run_child(options);
  const std::vector<int64_t> sizes = sizes_mb(options);
  std::vector<std::vector<std::pair<int64_t, double>>> results;
  for (const Config& c : kConfigs) {
    results.push_back(run_config(c, options.quick ? 300 : 600));
    if (results.back().size() != sizes.size()) return 1;
  }
  std::printf(
      "Synchronizing the gradients of one model across %d worker processes on this machine "
      "(loopback),\nmedian seconds per pushpull (sum and return to every worker):\n",
      kWorkers);
  std::printf("%10s %12s %12s %12s %14s\n", "model MB", "ring", "1 server", "2 servers",
              "2 srv vs 1");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double ring = results[0][i].second, one = results[1][i].second,
                 two = results[2][i].second;
    std::printf("%10lld %12.4f %12.4f %12.4f %13.2fx\n", static_cast<long long>(sizes[i]), ring,
                one, two, one / two);
  }
  std::printf(
      "\nThe seed: a single parameter server receives every worker's gradients and sends every\n"
      "worker the result, 2 x W x model bytes through one link, so it is the bottleneck as\n"
      "workers are added; the ring moves 2 (W-1)/W x model bytes per worker whatever W; splitting\n"
      "the keys over S servers divides the servers' load by S (hierarchical synchronization:\n"
      "more servers, more bandwidth). With W=2, the busiest process sends and receives per sync:\n"
      "ring 2 x model (each worker), 1 server 4 x model (the server), 2 servers 2 x model (each\n"
      "server and each worker). Here every process shares one machine's cores and memory\n"
      "bandwidth (loopback TCP), so the servers' links are not separate: the figures show the\n"
      "protocols' costs, not a network's.\n");
  const size_t last = sizes.size() - 1;
  const double ring = results[0][last].second, one = results[1][last].second,
               two = results[2][last].second;
  const double mb = static_cast<double>(sizes[last]);
  bench::print_json_line("seed_parameter_server", {{"model_mb", mb},
                                                   {"ring_s", ring},
                                                   {"one_server_s", one},
                                                   {"two_servers_s", two},
                                                   {"two_vs_one_server", one / two},
                                                   {"ring_vs_one_server", one / ring}});
  return 0;
}

const bench::Registration reg{
    "seed_parameter_server",
    "seed 12.7: gradient sync of 1-256 MB on 2 workers: ring allreduce vs 1 and 2 servers", run};

}  // namespace
