// `janus run`: an exported model (Janus's or MXNet's) through the deploy runtime.
#include "run_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <ostream>
#include <regex>
#include <span>

#include "janus/base/error.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/graph/npy.h"
#include "janus/graph/symbol.h"
#include "janus/ops/ops.h"

namespace janus::tools {
namespace {

void check_options(const RunOptions& o) {
  JANUS_CHECK(o.random != !o.input.empty(), ValueError,
              "give exactly one of --input FILE.npy and --random [--shape ...]");
  JANUS_CHECK(o.random || o.shape.empty(), ValueError,
              "--shape {} is for --random; --input {} has a shape of its own", Shape(o.shape),
              o.input);
  JANUS_CHECK(!o.epoch || *o.epoch >= 0, ValueError, "--epoch is {}, expected >= 0", *o.epoch);
  JANUS_CHECK(o.repeat >= 0, ValueError, "--repeat is {}, expected >= 0", o.repeat);
  JANUS_CHECK(o.output.empty() || o.output.ends_with(".npy"), ValueError,
              "--output {}: expected a file name ending in .npy", o.output);
}

// Output k of `count` goes to FILE itself when it is the only one, else to STEM-k.npy.
std::string output_path(const std::string& file, size_t k, size_t count) {
  if (count == 1) return file;
  return fmt::format("{}-{}.npy", file.substr(0, file.size() - 4), k);
}

// The shape of the graph's input as recorded at export; ValueError when it is not recorded.
Shape recorded_input_shape(const deploy::Predictor& predictor) {
  const std::string& name = predictor.input_names().at(0);
  for (const graph::NodePtr& node : predictor.symbol().graph().arguments()) {
    if (node->name == name && !node->specs.empty()) return node->specs[0].shape;
  }
  throw ValueError(fmt::format(
      "--random: the graph does not record the shape of its input '{}', give it with --shape",
      name));
}

NDArray make_input(const RunOptions& o, const deploy::Predictor& predictor) {
  if (!o.random) return graph::load_npy(o.input);
  const Shape shape = o.shape.empty() ? recorded_input_shape(predictor) : Shape(o.shape);
  seed(0);
  return random_normal(0, 1, shape);
}

}  // namespace

std::string params_file_of(const std::string& prefix, std::optional<int> epoch) {
  const std::filesystem::path p(prefix);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  const std::string name = p.filename().string();
  constexpr const char* kExtensions[] = {"safetensors", "params"};  // Janus's first
  if (epoch) {
    for (const char* ext : kExtensions) {
      const std::string file = fmt::format("{}-{:04d}.{}", prefix, *epoch, ext);
      if (std::filesystem::exists(file)) return file;
    }
    JANUS_THROW(IOError, "no {0}-{1:04d}.safetensors or {0}-{1:04d}.params in '{2}'", name, *epoch,
                dir.string());
  }
  const std::regex pattern(
      std::regex_replace(name, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
      R"(-(\d{4})\.(safetensors|params))");
  int best = -1;
  std::string best_extension;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (!std::regex_match(file, m, pattern)) continue;
    const int e = std::stoi(m[1].str());
    if (e > best || (e == best && m[2] == "safetensors")) {
      best = e;
      best_extension = m[2].str();
    }
  }
  JANUS_CHECK(best >= 0, IOError, "no {0}-NNNN.safetensors or {0}-NNNN.params found in '{1}'", name,
              dir.string());
  return fmt::format("{}-{:04d}.{}", prefix, best, best_extension);
}

void run_model(const RunOptions& o, std::ostream& out) {
  check_options(o);
  const std::string symbol_file = o.prefix + "-symbol.json";
  const std::string params_file = params_file_of(o.prefix, o.epoch);
  deploy::Predictor predictor(symbol_file, params_file);
  const NDArray x = make_input(o, predictor);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  std::vector<NDArray> ys = predictor.run(std::span<const NDArray>(&x, 1));
  for (const NDArray& y : ys) wait_to_read(y);
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  start = Clock::now();
  for (int i = 0; i < o.repeat; ++i) ys = predictor.run(std::span<const NDArray>(&x, 1));
  for (const NDArray& y : ys) wait_to_read(y);
  const double each_ms =
      o.repeat > 0
          ? std::chrono::duration<double, std::milli>(Clock::now() - start).count() / o.repeat
          : 0;
  out << fmt::format("model: {} + {}\ninput: {} {}\n", symbol_file, params_file, x.shape(),
                     dtype_name(x.dtype()));
  const std::vector<std::string> names = predictor.output_names();
  for (size_t i = 0; i < ys.size(); ++i) {
    out << fmt::format("output {} ({}):\n", names.at(i), ys[i].shape()) << ys[i] << "\n";
  }
  out << fmt::format(
      "time: first call {:.3f} ms (compiles the graph), then {:.3f} ms per call "
      "({} calls)\n",
      first_ms, each_ms, o.repeat);
  if (o.output.empty()) return;
  for (size_t i = 0; i < ys.size(); ++i) {
    const std::string path = output_path(o.output, i, ys.size());
    graph::save_npy(path, ys[i]);
    out << fmt::format("wrote output {} to {}\n", names.at(i), path);
  }
}

}  // namespace janus::tools
