// `janus convert`: an exported model into ONNX or into Janus's own format.
#include "convert.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "janus/base/error.h"
#include "janus/graph/bind.h"
#include "janus/graph/mxnet_import.h"
#include "janus/graph/safetensors.h"

#include "onnx_export.h"
#include "run_model.h"

namespace janus::tools {
namespace {

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
  JANUS_CHECK(!o.fixed_batch || o.to == "onnx", ValueError,
              "--fixed-batch is for --to onnx (a Janus model keeps any shape)");
  JANUS_CHECK(o.shape.empty() || o.inputs.size() == 1, ValueError,
              "--shape gives one input's shape, but --inputs names {}", o.inputs.size());
  JANUS_CHECK(!o.epoch || (*o.epoch >= 0 && *o.epoch <= 9999), ValueError,
              "--epoch is {}, expected 0 to 9999", *o.epoch);
}

int epoch_of(const std::string& params_file) {
  const std::string stem = std::filesystem::path(params_file).stem().string();
  return std::stoi(stem.substr(stem.size() - 4));
}

// A Janus model rewritten as it is, once its parameters are checked against the graph (integer
// parameters keep their dtype).
void copy_janus_model(const ConvertOptions& o, const std::string& symbol_file,
                      const std::string& params_file, const std::string& out_params_file) {
  const graph::Symbol symbol = graph::load_symbol_file(symbol_file);
  const graph::NamedArrays params = graph::load_safetensors(params_file);
  graph::bind_parameters(symbol,
                         graph::bind_arguments(symbol.list_arguments(), o.inputs,
                                               fmt::format("janus convert ('{}')", symbol_file)),
                         params, "janus convert", symbol_file, params_file);
  symbol.save(o.output + "-symbol.json");
  graph::save_safetensors(
      out_params_file, params,
      {{"format", "janus.params"}, {"inputs", fmt::format("{}", fmt::join(o.inputs, ","))}});
}

}  // namespace

void convert_model(const ConvertOptions& o, std::ostream& out) {
  check_options(o);
  const std::string symbol_file = o.prefix + "-symbol.json";
  const std::string params_file = params_file_of(o.prefix, o.epoch);
  if (o.to == "onnx") {
    interchange::OnnxExportOptions e;
    e.input_names = o.inputs;
    if (!o.shape.empty()) e.input_shapes[o.inputs[0]] = Shape(o.shape);
    e.dynamic_batch = !o.fixed_batch;
    e.symbol_file = symbol_file;
    e.params_file = params_file;
    // The graph first: parameters without it are reported as a missing graph.
    const graph::Symbol symbol = graph::load_symbol_file(symbol_file);
    interchange::save_onnx(o.output, symbol, graph::load_params_file(params_file), e);
    out << fmt::format("wrote {} (ONNX opset {}) from {} + {}\n", o.output, interchange::kOnnxOpset,
                       symbol_file, params_file);
    return;
  }
  const int epoch = epoch_of(params_file);
  if (params_file.ends_with(".params")) {
    graph::convert_mxnet_model(symbol_file, params_file, o.output, epoch);
  } else {
    copy_janus_model(o, symbol_file, params_file,
                     fmt::format("{}-{:04d}.safetensors", o.output, epoch));
  }
  out << fmt::format("wrote {}-symbol.json and {}-{:04d}.safetensors from {} + {}\n", o.output,
                     o.output, epoch, symbol_file, params_file);
}

}  // namespace janus::tools
