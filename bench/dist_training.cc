// dist_training: data-parallel training across processes on this machine, measured. LeNet on
// Fashion-MNIST, hybridized (`janus train --model lenet --hybridize`, batch 128, SGD lr 0.05
// momentum 0.9, the hyperparameters of fashion_lenet_epoch and data_parallel), one epoch timed
// after an untimed one, four ways, each in processes of its own:
//   one process, 2 threads   the reference: `janus train` as a user runs it on this machine
//   one process, 1 thread    for the bound below
//   2 workers, allreduce     dist_allreduce, 1 thread each, every worker on half of each batch
//   2 workers + 1 server     dist_sync, the optimizer on the server, 1 thread per process
// The figure is samples per second of the job (training samples of the epoch / its seconds)
// and the ratio to one process. The bound: two workers of one thread each cannot train faster
// than twice one process of one thread (the arithmetic split perfectly over two cores, nothing
// spent on the exchange); the gap to it is the cost of synchronizing every step (plus reading
// every batch twice: each worker reads the whole batch and keeps its rows). It re-executes
// itself for each process (self_job.h). `--quick` trains on 6000 samples. Ends with one JSON
// line: samples_per_s of each, ratios, bound and test accuracies.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "janus/dist/free_port.h"
#include "janus/dist/parameter_server.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "self_job.h"
#include "suite.h"
#include "train.h"

namespace {

namespace training = janus::training;

constexpr int kWorkers = 2;

struct Config {
  const char* label;
  const char* kvstore;  // "device": one process
  int workers, servers, threads;
};
constexpr Config kConfigs[] = {
    {"one process, 2 threads", "device", 1, 0, 2},
    {"one process, 1 thread", "device", 1, 0, 1},
    {"2 workers, dist_allreduce", "dist_allreduce", kWorkers, 0, 1},
    {"2 workers + 1 server, dist_sync", "dist_sync", kWorkers, 1, 1},
};

int64_t train_samples(bool quick) { return quick ? 6000 : 60000; }

// ---- a child: one process of one configuration ----

int run_child(const bench::Options& options) {
  if (janus::dist::maybe_run_server()) return 0;
  training::TrainOptions o;
  o.model = "lenet";
  o.hybridize = true;
  o.epochs = 2;  // the first warms up (oneDNN primitives, memory pools, connections)
  o.batch_size = 128;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.progress = false;
  o.limit = options.quick ? train_samples(true) : 0;
  o.kvstore = std::getenv("JANUS_DIST_BENCH_KVSTORE");
  std::ostringstream log;
  const training::EpochResult last = training::train(o, log).back();
  const char* rank = std::getenv("JANUS_RANK");
  if (rank == nullptr || std::string(rank) == "0") {
    std::ofstream(std::getenv("JANUS_DIST_BENCH_OUT")) << last.seconds << ' ' << last.test_acc;
  }
  return 0;
}

// ---- the parent ----

struct Figures {
  double seconds = 0, test_acc = 0;
};

bool run_config(const Config& c, bool quick, Figures& out) {
  const std::string out_path = (std::filesystem::temp_directory_path() /
                                ("janus_dist_training_" + std::to_string(::getpid())))
                                   .string();
  std::filesystem::remove(out_path);
  const int port = janus::dist::free_loopback_port();
  std::vector<bench::Variables> processes;
  for (int r = 0; r < c.workers + c.servers; ++r) {
    bench::Variables v;
    if (c.workers + c.servers > 1) v = bench::rank_variables(r, c.workers, c.servers, port);
    v.insert(v.end(), {{"JANUS_DIST_BENCH_CHILD", "1"},
                       {"JANUS_DIST_BENCH_KVSTORE", c.kvstore},
                       {"JANUS_DIST_BENCH_OUT", out_path},
                       {"OMP_NUM_THREADS", std::to_string(c.threads)}});
    processes.push_back(std::move(v));
  }
  const bool ok = bench::run_self_job(processes, quick ? 300 : 900, "dist_training");
  std::ifstream in(out_path);
  const bool read = static_cast<bool>(in >> out.seconds >> out.test_acc);
  std::filesystem::remove(out_path);
  if (ok && !read) std::fprintf(stderr, "dist_training: '%s' wrote no figures\n", c.label);
  return ok && read;
}

int run(const bench::Options& options) {
  if (std::getenv("JANUS_DIST_BENCH_CHILD") != nullptr) return run_child(options);
  const double samples = static_cast<double>(train_samples(options.quick));
  std::printf(
      "dist_training: one epoch of LeNet (hybridized) on %.0f Fashion-MNIST samples, batch 128, "
      "SGD lr 0.05 "
      "momentum 0.9 (after an untimed epoch), on this machine (loopback)\n",
      samples);
  std::vector<Figures> f(std::size(kConfigs));
  for (size_t i = 0; i < std::size(kConfigs); ++i) {
    if (!run_config(kConfigs[i], options.quick, f[i])) return 1;
  }
  auto rate = [&](size_t i) { return samples / f[i].seconds; };
  const double bound = 2 * rate(1);
  std::printf("%34s %10s %12s %10s %12s %10s\n", "", "epoch s", "samples/s", "vs one",
              "vs 1 thread", "test acc");
  for (size_t i = 0; i < std::size(kConfigs); ++i) {
    std::printf("%34s %10.3f %12.0f %9.2fx %11.2fx %10.4f\n", kConfigs[i].label, f[i].seconds,
                rate(i), rate(i) / rate(0), rate(i) / rate(1), f[i].test_acc);
  }
  std::printf(
      "bound for 2 workers of 1 thread: 2 x one process of 1 thread = %.0f samples/s (%.2fx one "
      "process of 2 threads); dist_allreduce reaches %.0f%% of it, dist_sync %.0f%%\n",
      bound, bound / rate(0), 100 * rate(2) / bound, 100 * rate(3) / bound);
  bench::print_json_line("dist_training", {{"one_process_samples_per_s", rate(0)},
                                           {"one_thread_samples_per_s", rate(1)},
                                           {"allreduce_samples_per_s", rate(2)},
                                           {"sync_samples_per_s", rate(3)},
                                           {"allreduce_vs_one", rate(2) / rate(0)},
                                           {"sync_vs_one", rate(3) / rate(0)},
                                           {"allreduce_vs_one_thread", rate(2) / rate(1)},
                                           {"sync_vs_one_thread", rate(3) / rate(1)},
                                           {"bound_samples_per_s", bound},
                                           {"allreduce_of_bound", rate(2) / bound},
                                           {"test_acc_one", f[0].test_acc},
                                           {"test_acc_allreduce", f[2].test_acc},
                                           {"test_acc_sync", f[3].test_acc}});
  return 0;
}

const bench::Registration reg{
    "dist_training",
    "LeNet epoch: one process vs 2 worker processes (dist_allreduce, dist_sync + 1 server)", run};

}  // namespace
