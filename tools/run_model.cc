// `janus run`: an exported model through the deploy runtime.
#include "run_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <ostream>
#include <regex>

#include "janus/base/error.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "npy.h"

namespace janus::tools {
namespace {

// The highest NNNN of PREFIX-NNNN.safetensors beside PREFIX.
int latest_epoch(const std::string& prefix) {
  const std::filesystem::path p(prefix);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  const std::regex pattern(
      std::regex_replace(p.filename().string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
      R"(-(\d{4})\.safetensors)");
  int best = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) best = std::max(best, std::stoi(m[1].str()));
  }
  JANUS_CHECK(best >= 0, IOError, "janus run: no {}-NNNN.safetensors found in '{}'",
              p.filename().string(), dir.string());
  return best;
}

}  // namespace

void run_model(const RunOptions& o, std::ostream& out) {
  JANUS_CHECK(o.random != !o.input.empty(), ValueError,
              "janus run: give exactly one of --input FILE.npy and --random --shape ...");
  JANUS_CHECK(!o.random || !o.shape.empty(), ValueError, "janus run: --random needs --shape");
  JANUS_CHECK(o.repeat >= 0, ValueError, "janus run: --repeat is {}, expected >= 0", o.repeat);
  const int epoch = o.epoch >= 0 ? o.epoch : latest_epoch(o.prefix);
  const std::string symbol_file = o.prefix + "-symbol.json";
  const std::string params_file = fmt::format("{}-{:04d}.safetensors", o.prefix, epoch);
  deploy::Predictor predictor(symbol_file, params_file);
  NDArray x;
  if (o.random) {
    seed(0);
    x = random_normal(0, 1, Shape(o.shape));
  } else {
    x = load_npy(o.input);
  }
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  NDArray y = predictor.run(x);
  wait_to_read(y);
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  start = Clock::now();
  for (int i = 0; i < o.repeat; ++i) y = predictor.run(x);
  wait_to_read(y);
  const double each_ms =
      o.repeat > 0
          ? std::chrono::duration<double, std::milli>(Clock::now() - start).count() / o.repeat
          : 0;
  out << fmt::format("model: {} + {}\ninput: {} {}\n", symbol_file, params_file, x.shape(),
                     dtype_name(x.dtype()));
  out << fmt::format("output {} ({}):\n", predictor.output_names().at(0), y.shape()) << y << "\n";
  out << fmt::format(
      "time: first call {:.3f} ms (compiles the graph), then {:.3f} ms per call "
      "({} calls)\n",
      first_ms, each_ms, o.repeat);
}

}  // namespace janus::tools
