// hybridize_lenet_train and hybridize_mlp_train: one training step of LeNet or of the Fashion
// MLP (training/models.h) on Fashion-MNIST batches (batch 256, SGD with momentum) imperative,
// hybridized, and hybridized with static_alloc (forward and backward each one compiled graph),
// side by side in one run: time per step, the issuing thread's CPU time per step (what the
// frontend spends pushing it) and the peak of Janus' allocator above what the net held before
// its first step. The three nets' steps alternate (one step of each per round), so that load
// from other processes falls on all three alike; the figure is each mode's median step. Then a
// few more rounds under the profiler give each operator's milliseconds per step in each mode (a
// hybridized step's operators are the steps of its compiled graphs): where one mode loses time
// against another. The parameters of the three runs start equal and must end equal (the same
// arithmetic). The floor of a step binds compute: its FLOPs (bench/flops.h) at the compute peak
// (machine.h). Ends with one JSON line.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "janus/janus.h"
#include "janus/optim/trainer.h"
#include "janus/profile/profiler.h"

#include "bench_util.h"
#include "flops.h"
#include "machine.h"
#include "models.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;
namespace nn = janus::nn;

constexpr int kModes = 3;  // 0: imperative, 1: hybridized, 2: hybridized with static_alloc
constexpr const char* kModeNames[kModes] = {"imperative", "hybridized", "static_alloc"};
constexpr int64_t kBatch = 256;

struct Run {
  std::shared_ptr<nn::Sequential> net;
  std::unique_ptr<janus::optim::Trainer> trainer;
  int64_t held = 0;              // what the warm-up step left allocated (optimizer state, graphs)
  int64_t transient = 0;         // the largest rise above the start of a timed step
  std::vector<double> ms;        // the timed steps
  std::vector<double> cpu_ms;    // the CPU time of the process (every thread) in each timed step
  std::vector<double> issue_us;  // the issuing thread's CPU time to push each timed step
  double first_ms = 0, first_cpu_ms = 0;  // the first step (hybridized: tracing, compiling)
};

// CPU time of `clock` (the whole process, or this thread) in ms.
double clock_ms(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
// CPU time of the whole process: what a step costs in work, whatever else the machine runs.
double cpu_ms() { return clock_ms(CLOCK_PROCESS_CPUTIME_ID); }

NDArray step(Run& r, const NDArray& x, const NDArray& y) {
  const nn::SoftmaxCrossEntropyLoss loss_fn;
  NDArray loss;
  {
    janus::autograd::RecordScope record;
    loss = loss_fn((*r.net)(x), y);
  }
  janus::autograd::backward(loss);
  r.trainer->step(kBatch);
  return loss;
}

// One step of `r`, finished, timed; its allocator peak above the start goes into r.transient.
void timed_step(Run& r, const NDArray& x, const NDArray& y) {
  janus::wait_all();
  auto& alloc = janus::allocator_for(janus::cpu());
  const int64_t before = janus::memory_stats(janus::cpu()).bytes_in_use;
  alloc.reset_peak();
  const double cpu0 = cpu_ms();
  Timer t;
  const double issue0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
  const NDArray loss = step(r, x, y);
  r.issue_us.push_back((clock_ms(CLOCK_THREAD_CPUTIME_ID) - issue0) * 1e3);
  janus::wait_to_read(loss);
  janus::wait_all();
  r.ms.push_back(t.ms());
  r.cpu_ms.push_back(cpu_ms() - cpu0);
  r.transient = std::max(r.transient, janus::memory_stats(janus::cpu()).peak_bytes_in_use - before);
}

}  // namespace

namespace {

// The model a run trains: its name in training/models.h, its layers' products and the learning
// rate of `janus train`'s defaults for it.
struct Model {
  const char* name;   // "lenet", "mlp"
  const char* title;  // "LeNet", "MLP"
  const char* bench;  // the benchmark's name
  std::vector<bench::LayerMacs> layers;
  double lr;
};

int run_model(const bench::Options& options, const Model& model) {
  const int steps = options.quick ? 3 : 60, profiled = options.quick ? 1 : 5;
  auto data = std::make_shared<janus::data::FashionMNIST>();
  std::vector<NDArray> xs, ys;
  for (int64_t b = 0; b < 4; ++b) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < kBatch; ++i) idx.push_back(b * kBatch + i);
    auto batch = data->get_batch(idx);
    xs.push_back(batch[0]);
    ys.push_back(batch[1]);
  }
  Run runs[kModes];
  for (int m = 0; m < kModes; ++m) {
    Run& r = runs[m];
    r.net = janus::training::make_model(model.name);
    r.net->initialize(nn::Xavier());
    janus::seed(1);
    {
      janus::autograd::PauseScope no_record;
      (*r.net)(xs[0]);  // deferred shapes, same draws in every run
    }
    if (m > 0) r.net->hybridize(true, {.static_alloc = m == 2});
    r.trainer = std::make_unique<janus::optim::Trainer>(
        r.net->collect_params(), janus::optim::make_optimizer("sgd", model.lr, {.momentum = 0.9}));
    // What the warm-up step leaves allocated (the optimizer's state; hybridized, the compiled
    // graphs' buffers) counts in the peak; its one-off tracing and compilation do not.
    janus::wait_all();
    const int64_t base = janus::memory_stats(janus::cpu()).bytes_in_use;
    const double cpu0 = cpu_ms();
    Timer t;
    janus::wait_to_read(step(r, xs[0], ys[0]));
    janus::wait_all();
    r.first_ms = t.ms();
    r.first_cpu_ms = cpu_ms() - cpu0;
    r.held = janus::memory_stats(janus::cpu()).bytes_in_use - base;
  }
  for (int i = 1; i <= steps; ++i) {
    for (Run& r : runs) timed_step(r, xs[i % xs.size()], ys[i % ys.size()]);
  }
  // Milliseconds per step of each operator in each mode, from `profiled` more rounds.
  std::map<std::string, double> op_ms[kModes];
  for (int i = 0; i < profiled; ++i) {
    for (int m = 0; m < kModes; ++m) {
      janus::wait_all();
      janus::profiler::start();
      janus::wait_to_read(step(runs[m], xs[i % xs.size()], ys[i % ys.size()]));
      janus::wait_all();
      janus::profiler::stop();
      for (const auto& e : janus::profiler::events()) {
        op_ms[m][e.name] += static_cast<double>(e.end_ns - e.start_ns) / 1e6 / profiled;
      }
    }
  }

  bool equal = true;
  const auto pa = runs[0].net->collect_params();
  for (int m = 1; m < kModes; ++m) {
    const auto pb = runs[m].net->collect_params();
    for (const auto& [name, p] : pa) {
      equal = equal &&
              janus::to_vector<float>(p->data()) == janus::to_vector<float>(pb.at(name)->data());
    }
  }
  double step_ms[kModes], peak_mb[kModes];
  std::printf("%s training step, batch %lld, SGD momentum (median of %d interleaved steps):\n",
              model.title, static_cast<long long>(kBatch), steps);
  for (int m = 0; m < kModes; ++m) {
    step_ms[m] = bench::median(runs[m].ms);
    peak_mb[m] = static_cast<double>(runs[m].held + runs[m].transient) / 1e6;
    std::printf(
        "  %-13s %8.2f ms (fastest %.2f; CPU time %.2f ms)   peak memory %7.1f MB   first step "
        "%.2f ms (CPU %.2f ms)   issue %.1f us\n",
        kModeNames[m], step_ms[m], bench::min_of(runs[m].ms), bench::median(runs[m].cpu_ms),
        peak_mb[m], runs[m].first_ms, runs[m].first_cpu_ms, bench::median(runs[m].issue_us));
  }
  const double floor_ms = bench::training_flops_per_sample(model.layers) * kBatch /
                          (bench::compute_peak_gflops(bench::janus_kernel_threads()) * 1e6);
  const double floor_ratio = *std::min_element(step_ms, step_ms + kModes) / floor_ms;
  std::printf(
      "  floor %.2f ms (compute binds: the step's FLOPs at the compute peak); fastest mode "
      "/ floor %.2f\n",
      floor_ms, floor_ratio);
  std::printf(
      "  hybridized / imperative: time %.3f, peak memory %.3f (static_alloc: %.3f, %.3f; "
      "target <= 0.7); parameters after training %s\n",
      step_ms[1] / step_ms[0], peak_mb[1] / peak_mb[0], step_ms[2] / step_ms[0],
      peak_mb[2] / peak_mb[0], equal ? "bitwise equal" : "DIFFER");
  std::printf(
      "\nms per step by operator (profiled, mean of %d steps; cached_op holds its graph's "
      "operators):\n%-28s %12s %12s %12s\n",
      profiled, "operator", kModeNames[0], kModeNames[1], kModeNames[2]);
  std::map<std::string, bool> names;
  for (const auto& ops : op_ms) {
    for (const auto& [name, ms] : ops) names[name] = true;
  }
  for (const auto& [name, unused] : names) {
    std::printf("%-28s", name.c_str());
    for (auto& ops : op_ms) std::printf(" %12.3f", ops.count(name) ? ops.at(name) : 0.0);
    std::printf("\n");
  }
  bench::print_json_line(model.bench, {{"imperative_ms", step_ms[0]},
                                       {"hybridized_ms", step_ms[1]},
                                       {"time_ratio", step_ms[1] / step_ms[0]},
                                       {"imperative_peak_mb", peak_mb[0]},
                                       {"hybridized_peak_mb", peak_mb[1]},
                                       {"memory_ratio", peak_mb[1] / peak_mb[0]},
                                       {"static_alloc_ms", step_ms[2]},
                                       {"imperative_cpu_ms", bench::median(runs[0].cpu_ms)},
                                       {"hybridized_cpu_ms", bench::median(runs[1].cpu_ms)},
                                       {"static_alloc_cpu_ms", bench::median(runs[2].cpu_ms)},
                                       {"static_alloc_peak_mb", peak_mb[2]},
                                       {"imperative_issue_us", bench::median(runs[0].issue_us)},
                                       {"hybridized_issue_us", bench::median(runs[1].issue_us)},
                                       {"static_alloc_issue_us", bench::median(runs[2].issue_us)},
                                       {"floor_ms", floor_ms},
                                       {"floor_ratio", floor_ratio},
                                       {"params_equal", equal ? 1.0 : 0.0}});
  return equal ? 0 : 1;
}

int run_lenet(const bench::Options& options) {
  return run_model(options,
                   {"lenet", "LeNet", "hybridize_lenet_train", bench::lenet_layers(), 0.05});
}
int run_mlp(const bench::Options& options) {
  return run_model(options, {"mlp", "MLP", "hybridize_mlp_train", bench::mlp_layers(), 0.1});
}

const bench::Registration lenet_reg{
    "hybridize_lenet_train", "LeNet training step, hybridized vs imperative: time and peak memory",
    run_lenet};
const bench::Registration mlp_reg{
    "hybridize_mlp_train",
    "Fashion MLP training step, hybridized vs imperative: time and peak memory", run_mlp};

}  // namespace
