// mxnet_import: Apache MXNet 1.9.1 exports of the seed MLP (512-256-128-2) and LeNet
// (tests/fixtures/mxnet/legacy/) run through Janus's deploy::Predictor and, in the same run, by
// MXNet 1.9.1 itself (bench/peers/mxnet_import.py, a child process: SymbolBlock.imports,
// hybridized with static_alloc). Per call, waited for, at batch 1 and batch 64. Rounds of calls
// alternate between the two sides, and ratio = Janus / MXNet is the median of the ratios of the
// rounds run side by side (target <= 0.5): timing one side after the other let a slow spell of
// the machine fall on one side only. Each case also has a floor: its forward FLOPs at the
// compute peak measured in the same run (machine.h: one thread's oneDNN sgemm in its CPU time,
// times the threads), which no implementation beats; floor_ratio = Janus / floor, and
// "0.5 < floor" marks a case where the target itself (half of MXNet's time) is below the floor,
// so unreachable. MXNet runs from $JANUS_MXNET_PYTHON, else build/bench-venv/bin/python (made
// by `scripts/install-deps.sh bench`); without it the bench says so and reports Janus alone.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "janus/graph/npy.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "flops.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

const char* const kModels[] = {"mlp", "lenet"};

// Forward FLOPs per sample of each model (flops.h).
double flops_per_sample(const std::string& model) {
  return bench::inference_flops_per_sample(model == "mlp" ? bench::seed_mlp_layers()
                                                          : bench::lenet_layers());
}
constexpr int kBatches[] = {1, 64};

std::string fixture(const std::string& model) {
  return std::string(JANUS_SOURCE_DIR) + "/tests/fixtures/mxnet/legacy/" + model;
}

// The fixture's input repeated `batch` times along axis 0.
NDArray batch_of(const NDArray& x, int batch) {
  const std::vector<float> one = janus::to_vector<float>(x);
  std::vector<float> all;
  for (int i = 0; i < batch; ++i) all.insert(all.end(), one.begin(), one.end());
  std::vector<int64_t> dims = x.shape().dims();
  dims[0] = batch;
  return janus::from_vector(all, janus::Shape(dims));
}

// Seconds per call over `calls` calls, each waited for.
double time_predictor(janus::deploy::Predictor& p, const NDArray& x, int calls) {
  Timer t;
  for (int i = 0; i < calls; ++i) janus::wait_to_read(p.run(x));
  return t.seconds() / calls;
}

std::string python_for_mxnet() {
  if (const char* env = std::getenv("JANUS_MXNET_PYTHON")) return env;
  return std::string(JANUS_SOURCE_DIR) + "/build/bench-venv/bin/python";
}

// MXNet 1.9.1 in a child process (bench/peers/mxnet_import.py) that times one round of calls
// per request, so that its rounds and ours alternate. Not usable (why() says so) when it
// cannot start or stops answering.
class MxnetPeer {
 public:
  explicit MxnetPeer(int threads) {
    const std::string python = python_for_mxnet();
    if (!std::filesystem::exists(python)) {
      why_ = "no Python at " + python +
             " (set JANUS_MXNET_PYTHON, or run scripts/install-deps.sh bench)";
      return;
    }
    std::string cmd = "OMP_NUM_THREADS=" + std::to_string(threads) + " exec '" + python + "' '" +
                      JANUS_SOURCE_DIR + "/bench/peers/mxnet_import.py'";
    for (const char* m : kModels) cmd += " '" + fixture(m) + "'";
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) {
      why_ = "cannot make pipes for " + python;
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      dup2(from_child[1], 2);
      close(to_child[1]);
      close(from_child[0]);
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    if (pid_ < 0) {
      close(to_child[1]);
      close(from_child[0]);
      why_ = "cannot start " + python;
      return;
    }
    // A peer that died must give an error here, not kill the bench with SIGPIPE.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old_sigpipe_);
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
    const auto ready = next_json();
    if (!ready.contains("ready")) fail("did not start");
  }

  ~MxnetPeer() {
    if (pid_ <= 0) return;
    std::fclose(to_);  // end of requests: the peer exits
    std::fclose(from_);
    waitpid(pid_, nullptr, 0);
    sigaction(SIGPIPE, &old_sigpipe_, nullptr);
  }
  MxnetPeer(const MxnetPeer&) = delete;
  MxnetPeer& operator=(const MxnetPeer&) = delete;

  const std::string& why() const { return why_; }

  // MXNet's seconds per call over `calls` calls of `model` at `batch`; NaN once the peer failed.
  double round(const std::string& model, int batch, int calls) {
    if (!why_.empty()) return NAN;
    std::fprintf(to_, "%s %d %d\n", model.c_str(), batch, calls);
    if (std::fflush(to_) != 0) {
      fail("stopped reading requests");
      return NAN;
    }
    const auto j = next_json();
    if (!j.contains("per_call_s")) {
      fail("gave no time for " + model + " at batch " + std::to_string(batch));
      return NAN;
    }
    return j["per_call_s"].get<double>();
  }

 private:
  // The next JSON line from the peer (other lines are kept for the error); null at its end.
  nlohmann::json next_json() {
    char line[4096];
    while (std::fgets(line, sizeof line, from_) != nullptr) {
      if (line[0] != '{') {
        other_ += line;
        continue;
      }
      auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_object()) return j;
    }
    return nlohmann::json::object();
  }

  void fail(const std::string& what) {
    const std::string tail = other_.size() > 600 ? other_.substr(other_.size() - 600) : other_;
    why_ = "MXNet 1.9.1 " + what + ": " + tail;
  }

  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  struct sigaction old_sigpipe_ {};
  std::string other_;
  std::string why_;
};

// The q-quantile (0..1) of `v`, the nearest rank.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Case {
  std::vector<double> janus_s, mxnet_s;  // seconds per call, one per round
  std::vector<double> ratios;            // janus / mxnet of the rounds run side by side
};

int run(const bench::Options& options) {
  const int calls = options.quick ? 10 : 100;
  const int rounds = options.quick ? 3 : 21;
  const int threads = bench::janus_kernel_threads();
  MxnetPeer mxnet(threads);
  // Rounds alternate between Janus and MXNet (who goes first alternates too), each after a
  // short pause that lets the other side's idle OpenMP threads stop spinning: a slow spell of
  // the machine then falls on both sides instead of on one.
  std::map<std::pair<std::string, int>, Case> cases;
  for (const char* model : kModels) {
    janus::deploy::Predictor p(fixture(model) + "-symbol.json", fixture(model) + "-0000.params");
    const NDArray one = janus::graph::load_npy(fixture(model) + "-input.npy");
    for (int batch : kBatches) {
      const NDArray x = batch_of(one, batch);
      for (int i = 0; i < 2; ++i) janus::wait_to_read(p.run(x));
      Case& c = cases[{model, batch}];
      for (int r = 0; r < rounds; ++r) {
        double j = 0, m = 0;
        for (int side = 0; side < 2; ++side) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          if ((side == 0) == (r % 2 == 0)) {
            j = time_predictor(p, x, calls);
          } else {
            m = mxnet.round(model, batch, calls);
          }
        }
        c.janus_s.push_back(j);
        if (std::isfinite(m)) {
          c.mxnet_s.push_back(m);
          c.ratios.push_back(j / m);
        }
      }
    }
  }
  const double peak_gflops = bench::compute_peak_gflops(threads);
  if (!mxnet.why().empty()) {
    std::printf("MXNet 1.9.1 unavailable, Janus alone: %s\n", mxnet.why().c_str());
    for (auto& [key, c] : cases) c.mxnet_s.clear();
  }

  std::printf("%-6s %5s %14s %14s %8s %12s %10s %12s %10s\n", "model", "batch", "Janus us/call",
              "MXNet us/call", "ratio", "ratio q1-q3", "floor us", "floor_ratio", "0.5<floor");
  double worst = 0;
  bool have_mxnet = false;
  std::map<std::string, double> fields;
  for (const char* model : kModels) {
    for (int batch : kBatches) {
      const Case& c = cases.at({model, batch});
      const double j = bench::median(c.janus_s);
      const bool paired = !c.mxnet_s.empty();
      const double m = paired ? bench::median(c.mxnet_s) : NAN;
      // The median of the side-by-side rounds' ratios: a slow spell hits both of a pair.
      const double ratio = paired ? bench::median(c.ratios) : NAN;
      if (paired) {
        have_mxnet = true;
        worst = std::max(worst, ratio);
      }
      const double floor_s = flops_per_sample(model) * batch / (peak_gflops * 1e9);
      const double floor_ratio = j / floor_s;
      if (paired) {
        const std::string spread =
            fmt::format("{:.2f}-{:.2f}", quantile(c.ratios, 0.25), quantile(c.ratios, 0.75));
        std::printf("%-6s %5d %14.1f %14.1f %8.2f %12s %10.2f %12.1f %10s\n", model, batch, j * 1e6,
                    m * 1e6, ratio, spread.c_str(), floor_s * 1e6, floor_ratio,
                    0.5 * m < floor_s ? "yes" : "no");
      } else {
        std::printf("%-6s %5d %14.1f %14s %8s %12s %10.2f %12.1f %10s\n", model, batch, j * 1e6,
                    "n/a", "n/a", "n/a", floor_s * 1e6, floor_ratio, "n/a");
      }
      const std::string key = std::string(model) + "_b" + std::to_string(batch);
      fields[key + "_janus_us"] = j * 1e6;
      fields[key + "_mxnet_us"] = m * 1e6;
      fields[key + "_ratio"] = ratio;
      fields[key + "_floor_us"] = floor_s * 1e6;
      fields[key + "_floor_ratio"] = floor_ratio;
    }
  }
  const double ratio = have_mxnet ? worst : NAN;
  std::printf(
      "ratio (the worst of the four, Janus / MXNet): %.2f (target <= 0.5); %d rounds of %d "
      "calls per side, alternating; ratio: the median of the rounds' ratios (q1-q3: their "
      "quartiles); us/call: medians; %d threads each\n"
      "floor: the case's forward FLOPs at the compute peak, %.1f GFLOP/s (one thread's sgemm in "
      "its CPU time x %d); 0.5<floor: half of MXNet's time is below it\n",
      ratio, rounds, calls, threads, peak_gflops, threads);
  bench::print_json_line("mxnet_import",
                         {{"ratio", ratio},
                          {"mlp_b1_janus_us", fields["mlp_b1_janus_us"]},
                          {"mlp_b1_mxnet_us", fields["mlp_b1_mxnet_us"]},
                          {"mlp_b64_janus_us", fields["mlp_b64_janus_us"]},
                          {"mlp_b64_mxnet_us", fields["mlp_b64_mxnet_us"]},
                          {"lenet_b1_janus_us", fields["lenet_b1_janus_us"]},
                          {"lenet_b1_mxnet_us", fields["lenet_b1_mxnet_us"]},
                          {"lenet_b64_janus_us", fields["lenet_b64_janus_us"]},
                          {"lenet_b64_mxnet_us", fields["lenet_b64_mxnet_us"]},
                          {"mlp_b1_floor_ratio", fields["mlp_b1_floor_ratio"]},
                          {"mlp_b64_floor_ratio", fields["mlp_b64_floor_ratio"]},
                          {"lenet_b1_floor_ratio", fields["lenet_b1_floor_ratio"]},
                          {"lenet_b64_floor_ratio", fields["lenet_b64_floor_ratio"]},
                          {"compute_peak_gflops", peak_gflops},
                          {"mxnet_available", have_mxnet ? 1.0 : 0.0}});
  return 0;
}

const bench::Registration reg{
    "mxnet_import",
    "MXNet 1.9.1 exports (seed MLP, LeNet) through Predictor vs MXNet itself, batch 1 and 64", run};

}  // namespace
