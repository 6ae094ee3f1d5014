// Loading a model's files whichever format they are in, and rewriting MXNet models as Janus's.
#include "janus/graph/mxnet_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "janus/base/error.h"
#include "janus/graph/bind.h"
#include "janus/graph/mxnet_json.h"
#include "janus/graph/mxnet_params.h"

namespace janus::graph {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open '{}' for reading: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  JANUS_CHECK(!in.bad(), IOError, "reading '{}' failed", path);
  return text.str();
}

// The first 8 bytes of `path` (fewer for a shorter file).
std::vector<char> read_head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open '{}' for reading: {}", path, std::strerror(errno));
  std::vector<char> head(8);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

Symbol load_symbol_file(const std::string& path) {
  const std::string text = read_text(path);
  if (is_mxnet_json(text)) return mxnet_symbol_from_json(text, path);
  return Symbol::fromjson(text, path);
}

NamedArrays load_params_file(const std::string& path, Device device) {
  if (is_mxnet_params(read_head(path))) return load_mxnet_params(path, device);
  return load_safetensors(path, nullptr, device);
}

void convert_mxnet_model(const std::string& symbol_file, const std::string& params_file,
                         const std::string& out_prefix, int out_epoch) {
  JANUS_CHECK(out_epoch >= 0 && out_epoch <= 9999, ValueError,
              "convert_mxnet_model: epoch {} must be in [0, 9999]", out_epoch);
  const std::string text = read_text(symbol_file);
  if (!is_mxnet_json(text)) {
    throw FormatError(
        fmt::format("convert_mxnet_model: '{}' is not an MXNet graph file (no "
                    "'nodes' and 'heads', or Janus's 'format' field)",
                    symbol_file));
  }
  const Symbol symbol = mxnet_symbol_from_json(text, symbol_file);
  const NamedArrays params = load_mxnet_params(params_file);
  // The inputs are the arguments that the parameters do not hold.
  std::vector<std::string> inputs;
  for (const std::string& name : symbol.list_arguments()) {
    const bool is_param =
        std::ranges::any_of(params, [&](const auto& p) { return p.first == name; });
    if (!is_param) inputs.push_back(name);
  }
  const ArgumentBinding binding =
      bind_arguments(symbol.list_arguments(), inputs, "convert_mxnet_model");
  const std::vector<NDArray> values =
      bind_parameters(symbol, binding, params, "convert_mxnet_model", symbol_file, params_file);
  NamedArrays arrays;
  for (const NodePtr& n : symbol.graph().nodes) {
    if (n->is_variable() && n->constant.defined()) arrays.emplace_back(n->name, n->constant);
  }
  for (size_t k = 0; k < values.size(); ++k) {
    arrays.emplace_back(binding.parameter_names[k], values[k]);
  }
  symbol.save(out_prefix + "-symbol.json");
  save_safetensors(fmt::format("{}-{:04d}.safetensors", out_prefix, out_epoch), arrays,
                   {{"format", "janus.params"},
                    {"inputs", fmt::format("{}", fmt::join(inputs, ","))},
                    {"converted_from", "mxnet"}});
}

}  // namespace janus::graph
