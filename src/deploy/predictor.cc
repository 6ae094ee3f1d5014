// Predictor: an exported graph and its parameters, compiled per input signature.
#include "janus/deploy/predictor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "janus/base/error.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/mxnet_import.h"

namespace janus::deploy {

Predictor::Predictor(const std::string& symbol_file, const std::string& params_file,
                     std::vector<std::string> input_names, Device device)
    : symbol_(graph::load_symbol_file(symbol_file)), input_names_(std::move(input_names)) {
  const std::string who = fmt::format("Predictor ('{}')", symbol_file);
  binding_ = graph::bind_arguments(symbol_.list_arguments(), input_names_, who);
  params_ = graph::bind_parameters(symbol_, binding_, graph::load_params_file(params_file, device),
                                   "Predictor", symbol_file, params_file);
}

Predictor::~Predictor() = default;

int Predictor::compilations() const { return static_cast<int>(cache_.compilations()); }

std::vector<NDArray> Predictor::run(std::span<const NDArray> inputs) {
  JANUS_CHECK(inputs.size() == input_names_.size(), ValueError,
              "Predictor: got {} inputs, expected {} ({})", inputs.size(), input_names_.size(),
              fmt::join(input_names_, ", "));
  const graph::InputSignature sig = graph::InputSignature::of(inputs);
  const std::vector<NDArray> args = binding_.gather(inputs, params_);
  std::shared_ptr<graph::CachedOp> op = cache_.find(sig);
  if (!op) {
    std::vector<ops::TensorSpec> specs;
    for (const NDArray& a : args) specs.push_back({a.shape(), a.dtype(), a.device()});
    // Intermediates in buffers of the compiled graph's own, as MXNet's predictor binds its
    // executor once: a repeated call on the same inputs, its earlier outputs dropped, allocates
    // nothing and binds nothing (CachedOp's kept call).
    op =
        cache_.insert(sig, std::make_shared<graph::CachedOp>(
                               symbol_, std::move(specs),
                               graph::CachedOpOptions{.static_alloc = true, .static_shape = true}));
  }
  return (*op)(args);
}

}  // namespace janus::deploy
