// A block's parameters through the safetensors files of janus/graph/safetensors.h; loading
// also reads the .params files of MXNet 1.x's Gluon save_parameters.
#include "janus/nn/serialization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/mxnet_import.h"
#include "janus/nn/block.h"
#include "janus/nn/rnn.h"

namespace janus::nn {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

void save_parameters(const Block& block, const std::string& path) {
  NamedArrays arrays;
  for (const auto& [name, p] : block.collect_params()) {
    JANUS_CHECK(p->initialized(), ValueError,
                "save_parameters: '{}': parameter '{}' ({}) has nothing to save: {}", path, name,
                p->name(),
                p->deferred() ? fmt::format("its shape {} has unknown (0) extents; run one "
                                            "forward pass first",
                                            p->shape())
                              : std::string("it has not been initialised"));
    arrays.emplace_back(name, p->data());
  }
  save_safetensors(path, arrays, {{"janus.content", "parameters"}});
}

void load_parameters(Block& block, const std::string& path, std::optional<Device> device,
                     bool allow_missing, bool ignore_extra) {
  const ParameterDict params = block.collect_params();
  NamedArrays loaded = graph::load_params_file(path, device.value_or(cpu()));
  // MXNet 1.9 saves its recurrent layers' parameters under the names of their unfused cells.
  for (auto& [name, value] : loaded) {
    if (params.contains(name)) continue;
    std::string alias = rnn_param_name_from_mxnet(name);
    if (!alias.empty() && params.contains(alias)) name = std::move(alias);
  }

  std::vector<std::string> missing, extra, mismatched;
  std::set<std::string> in_file;
  for (const auto& [name, value] : loaded) {
    in_file.insert(name);
    if (!params.contains(name)) {
      extra.push_back(name);
      continue;
    }
    const Parameter& p = *params.at(name);
    bool fits = p.shape().ndim() == value.shape().ndim();
    for (int i = 0; fits && i < p.shape().ndim(); ++i) {
      fits = p.shape()[i] == 0 || p.shape()[i] == value.shape()[i];
    }
    if (!fits) {
      mismatched.push_back(fmt::format("'{}' is {} in {} but {} in the file", name, p.shape(),
                                       block.name(), value.shape()));
    }
  }
  for (const auto& [name, p] : params) {
    if (!in_file.contains(name)) missing.push_back(name);
  }
  std::vector<std::string> problems;
  if (!missing.empty() && !allow_missing) {
    problems.push_back(
        fmt::format("it has no values for parameter(s) {} of {} (pass "
                    "allow_missing=true to keep their current values)",
                    join_names(missing), block.name()));
  }
  if (!extra.empty() && !ignore_extra) {
    problems.push_back(
        fmt::format("it holds value(s) for {}, which {} does not have; its "
                    "parameters are {} (pass ignore_extra=true to skip them)",
                    join_names(extra), block.name(), join_names(params.names())));
  }
  JANUS_CHECK(problems.empty(), ValueError, "load_parameters: '{}': {}", path,
              fmt::join(problems, "; "));
  JANUS_CHECK(mismatched.empty(), ShapeError,
              "load_parameters: '{}': shapes differ (0: not known yet): {}", path,
              fmt::join(mismatched, "; "));
  for (const auto& [name, value] : loaded) {
    if (!params.contains(name)) continue;
    const Parameter& p = *params.at(name);
    JANUS_CHECK(!device || !p.initialized() || p.data().device() == *device, DeviceError,
                "load_parameters: '{}': parameter '{}' is initialised on {}, cannot load it "
                "onto {}",
                path, name, p.data().device(), *device);
  }

  for (const auto& [name, value] : loaded) {
    if (!params.contains(name)) continue;
    Parameter& p = *params.at(name);
    // A parameter without a value takes the requested device through initialize(): with an
    // unknown shape that only records the device (deferred), nothing is drawn or allocated.
    if (!p.initialized() && device && *device != p.device()) {
      p.initialize(Zero(), *device, /*force_reinit=*/true);
    }
    p.set_data(value);
  }
}

}  // namespace janus::nn
