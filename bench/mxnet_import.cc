// mxnet_import: Apache MXNet 1.9.1 exports of the seed MLP (512-256-128-2) and LeNet
// (tests/fixtures/mxnet/legacy/) run through Janus's deploy::Predictor and, in the same run, by
// MXNet 1.9.1 itself (bench/peers/mxnet_import.py: SymbolBlock.imports, hybridized with
// static_alloc). Per call, waited for, at batch 1 and batch 64; ratio = Janus / MXNet (target
// <= 0.5). Each case also has a floor: its forward FLOPs at the compute peak measured in the
// same run (machine.h: one thread's oneDNN sgemm in its CPU time, times the threads), which no
// implementation beats; floor_ratio = Janus / floor, and "0.5 < floor" marks a case where the
// target itself (half of MXNet's time) is below the floor, so unreachable. MXNet runs from
// $JANUS_MXNET_PYTHON, else build/bench-venv/bin/python (made by `scripts/install-deps.sh bench`);
// without it the bench says so and reports Janus alone.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
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

// Median over rounds of the seconds per call, each call waited for.
double time_predictor(janus::deploy::Predictor& p, const NDArray& x, int calls, int rounds) {
  for (int i = 0; i < 2; ++i) janus::wait_to_read(p.run(x));
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    Timer t;
    for (int i = 0; i < calls; ++i) janus::wait_to_read(p.run(x));
    per_call.push_back(t.seconds() / calls);
  }
  return bench::median(per_call);
}

std::string python_for_mxnet() {
  if (const char* env = std::getenv("JANUS_MXNET_PYTHON")) return env;
  return std::string(JANUS_SOURCE_DIR) + "/build/bench-venv/bin/python";
}

// MXNet's seconds per call by (model, batch); empty, with `why` set, when MXNet cannot run.
std::map<std::pair<std::string, int>, double> run_mxnet(int calls, int rounds, int threads,
                                                        std::string& why) {
  const std::string python = python_for_mxnet();
  std::map<std::pair<std::string, int>, double> out;
  if (!std::filesystem::exists(python)) {
    why = "no Python at " + python +
          " (set JANUS_MXNET_PYTHON, or run scripts/install-deps.sh bench)";
    return out;
  }
  std::string cmd = "OMP_NUM_THREADS=" + std::to_string(threads) + " '" + python + "' '" +
                    JANUS_SOURCE_DIR + "/bench/peers/mxnet_import.py' " + std::to_string(calls) +
                    " " + std::to_string(rounds);
  for (const char* m : kModels) cmd += " '" + fixture(m) + "'";
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    why = "cannot start " + python;
    return out;
  }
  std::string other;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    if (line[0] != '{') {
      other += line;
      continue;
    }
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("per_call_s")) {
      out[{j["model"].get<std::string>(), j["batch"].get<int>()}] = j["per_call_s"].get<double>();
    }
  }
  const int status = pclose(pipe);
  if (out.empty()) {
    why = "MXNet 1.9.1 did not run (exit status " + std::to_string(status) +
          "): " + (other.size() > 600 ? other.substr(other.size() - 600) : other);
  }
  return out;
}

int run(const bench::Options& options) {
  const int calls = options.quick ? 20 : 200;
  const int rounds = options.quick ? 1 : 5;
  const int threads = bench::janus_kernel_threads();
  std::map<std::pair<std::string, int>, double> janus_s;
  for (const char* model : kModels) {
    janus::deploy::Predictor p(fixture(model) + "-symbol.json", fixture(model) + "-0000.params");
    const NDArray x = janus::graph::load_npy(fixture(model) + "-input.npy");
    for (int batch : kBatches)
      janus_s[{model, batch}] = time_predictor(p, batch_of(x, batch), calls, rounds);
  }
  const double peak_gflops = bench::compute_peak_gflops(threads);
  std::string why;
  const auto mxnet_s = run_mxnet(calls, rounds, threads, why);
  if (!why.empty()) std::printf("MXNet 1.9.1 unavailable, Janus alone: %s\n", why.c_str());

  std::printf("%-6s %5s %14s %14s %8s %10s %12s %10s\n", "model", "batch", "Janus us/call",
              "MXNet us/call", "ratio", "floor us", "floor_ratio", "0.5<floor");
  double worst = 0;
  std::map<std::string, double> fields;
  for (const char* model : kModels) {
    for (int batch : kBatches) {
      const double j = janus_s.at({model, batch});
      const auto it = mxnet_s.find({model, batch});
      const double m = it == mxnet_s.end() ? NAN : it->second;
      const double ratio = j / m;
      if (std::isfinite(ratio)) worst = std::max(worst, ratio);
      const double floor_s = flops_per_sample(model) * batch / (peak_gflops * 1e9);
      const double floor_ratio = j / floor_s;
      if (std::isfinite(m)) {
        std::printf("%-6s %5d %14.1f %14.1f %8.2f %10.2f %12.1f %10s\n", model, batch, j * 1e6,
                    m * 1e6, ratio, floor_s * 1e6, floor_ratio, 0.5 * m < floor_s ? "yes" : "no");
      } else {
        std::printf("%-6s %5d %14.1f %14s %8s %10.2f %12.1f %10s\n", model, batch, j * 1e6, "n/a",
                    "n/a", floor_s * 1e6, floor_ratio, "n/a");
      }
      const std::string key = std::string(model) + "_b" + std::to_string(batch);
      fields[key + "_janus_us"] = j * 1e6;
      fields[key + "_mxnet_us"] = m * 1e6;
      fields[key + "_ratio"] = ratio;
      fields[key + "_floor_us"] = floor_s * 1e6;
      fields[key + "_floor_ratio"] = floor_ratio;
    }
  }
  const double ratio = mxnet_s.empty() ? NAN : worst;
  std::printf(
      "ratio (the worst of the four, Janus / MXNet): %.2f (target <= 0.5); %d calls x %d "
      "rounds (medians), %d threads each\n"
      "floor: the case's forward FLOPs at the compute peak, %.1f GFLOP/s (one thread's sgemm in "
      "its CPU time x %d); 0.5<floor: half of MXNet's time is below it\n",
      ratio, calls, rounds, threads, peak_gflops, threads);
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
                          {"mxnet_available", mxnet_s.empty() ? 0.0 : 1.0}});
  return 0;
}

const bench::Registration reg{
    "mxnet_import",
    "MXNet 1.9.1 exports (seed MLP, LeNet) through Predictor vs MXNet itself, batch 1 and 64", run};

}  // namespace
