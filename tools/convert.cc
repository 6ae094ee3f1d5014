// `janus convert`: an exported model into ONNX or into Janus's own format.
#include "convert.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <regex>

#include "janus/base/error.h"
#include "janus/deploy/predictor.h"
#include "janus/graph/safetensors.h"
#include "janus/nn/parameter.h"
#include "janus/nn/symbol_block.h"

#include "onnx_export.h"

namespace janus::tools {
namespace {

constexpr const char* kParamsExtensions[] = {"safetensors", "params"};

// PREFIX-NNNN.<ext> for the given epoch, or else the highest NNNN beside PREFIX; safetensors
// (Janus) before params (MXNet).
std::string params_file_of(const std::string& prefix, std::optional<int> epoch) {
  const std::filesystem::path p(prefix);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  if (epoch) {
    for (const char* ext : kParamsExtensions) {
      const std::string f = fmt::format("{}-{:04d}.{}", prefix, *epoch, ext);
      if (std::filesystem::exists(f)) return f;
    }
    JANUS_THROW(IOError, "no {}-{:04d}.safetensors (or .params) in '{}'", p.filename().string(),
                *epoch, dir.string());
  }
  const std::string stem =
      std::regex_replace(p.filename().string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
  for (const char* ext : kParamsExtensions) {
    const std::regex pattern(stem + R"(-(\d{4})\.)" + ext);
    int best = -1;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::smatch m;
      const std::string name = entry.path().filename().string();
      if (std::regex_match(name, m, pattern)) best = std::max(best, std::stoi(m[1].str()));
    }
    if (best >= 0) return fmt::format("{}-{:04d}.{}", prefix, best, ext);
  }
  JANUS_THROW(IOError, "no {}-NNNN.safetensors (or .params) found in '{}'", p.filename().string(),
              dir.string());
}

struct LoadedModel {
  std::string symbol_file, params_file;
  graph::Symbol symbol;
  graph::NamedArrays params;
};

// Through the loaders that run exported models, so that every format they read converts:
// the graph as deploy::Predictor reads it (which checks the parameters against it). Janus's
// parameters as they are in the file; other formats' through nn::SymbolBlock::imports, whose
// parameters are float32 (Parameter::set_data casts to the parameter's dtype, which
// SymbolBlock leaves at float32), so integer parameters of a Janus model are read directly.
LoadedModel load_model(const ConvertOptions& o) {
  LoadedModel m;
  m.symbol_file = o.prefix + "-symbol.json";
  m.params_file = params_file_of(o.prefix, o.epoch);
  m.symbol = deploy::Predictor(m.symbol_file, m.params_file, o.inputs).symbol();
  if (m.params_file.ends_with(".safetensors")) {
    m.params = graph::load_safetensors(m.params_file);
    return m;
  }
  const auto block = nn::SymbolBlock::imports(m.symbol_file, o.inputs, m.params_file);
  for (const auto& [name, p] : block->own_params()) m.params.emplace_back(name, p->data(cpu()));
  return m;
}

void check_options(const ConvertOptions& o) {
  JANUS_CHECK(o.to == "onnx" || o.to == "janus", ValueError, "--to is '{}', expected onnx or janus",
              o.to);
  JANUS_CHECK(!o.output.empty(), ValueError, "name the output: {}",
              o.to == "onnx" ? "FILE.onnx" : "OUT_PREFIX");
  JANUS_CHECK(!o.inputs.empty() && std::ranges::none_of(o.inputs, &std::string::empty), ValueError,
              "--inputs '{}' names an empty input, expected names such as data0,data1",
              fmt::join(o.inputs, ","));
  JANUS_CHECK(o.shape.empty() || o.to == "onnx", ValueError,
              "--shape is for --to onnx (a Janus model keeps any shape)");
  JANUS_CHECK(o.shape.empty() || o.inputs.size() == 1, ValueError,
              "--shape gives one input's shape, but --inputs names {}", o.inputs.size());
  JANUS_CHECK(!o.epoch || (*o.epoch >= 0 && *o.epoch <= 9999), ValueError,
              "--epoch is {}, expected 0 to 9999", *o.epoch);
}

int epoch_of(const std::string& params_file) {
  const std::string stem = std::filesystem::path(params_file).stem().string();
  return std::stoi(stem.substr(stem.size() - 4));
}

}  // namespace

void convert_model(const ConvertOptions& o, std::ostream& out) {
  check_options(o);
  const LoadedModel m = load_model(o);
  if (o.to == "onnx") {
    interchange::OnnxExportOptions e;
    e.input_names = o.inputs;
    if (!o.shape.empty()) e.input_shapes[o.inputs[0]] = Shape(o.shape);
    e.symbol_file = m.symbol_file;
    e.params_file = m.params_file;
    interchange::save_onnx(o.output, m.symbol, m.params, e);
    out << fmt::format("wrote {} (ONNX opset {}) from {} + {}\n", o.output, interchange::kOnnxOpset,
                       m.symbol_file, m.params_file);
    return;
  }
  const std::string symbol_file = o.output + "-symbol.json";
  const std::string params_file =
      fmt::format("{}-{:04d}.safetensors", o.output, epoch_of(m.params_file));
  m.symbol.save(symbol_file);
  graph::save_safetensors(
      params_file, m.params,
      {{"format", "janus.params"}, {"inputs", fmt::format("{}", fmt::join(o.inputs, ","))}});
  out << fmt::format("wrote {} and {} from {} + {}\n", symbol_file, params_file, m.symbol_file,
                     m.params_file);
}

}  // namespace janus::tools
