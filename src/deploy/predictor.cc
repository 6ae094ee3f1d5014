// Predictor: an exported graph and its parameters, compiled per input shape.
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
#include "janus/graph/safetensors.h"

namespace janus::deploy {

struct Predictor::Cache {
  std::vector<std::pair<std::vector<Shape>, std::unique_ptr<graph::CachedOp>>> ops;
  int compilations = 0;
};

Predictor::Predictor(const std::string& symbol_file, const std::string& params_file,
                     std::vector<std::string> input_names, Device device)
    : input_names_(std::move(input_names)), device_(device), cache_(std::make_unique<Cache>()) {
  symbol_ = graph::Symbol::load(symbol_file);
  const graph::NamedArrays arrays = graph::load_safetensors(params_file, nullptr, device);
  arg_names_ = symbol_.list_arguments();
  const std::vector<std::string>& args = arg_names_;
  for (const std::string& name : input_names_) {
    JANUS_CHECK(std::find(args.begin(), args.end(), name) != args.end(), ValueError,
                "Predictor: '{}' has no input named '{}'; its arguments are [{}]", symbol_file,
                name, fmt::join(args, ", "));
  }
  std::map<std::string, ops::TensorSpec> declared;
  for (const graph::NodePtr& n : symbol_.graph().arguments()) {
    if (!n->specs.empty()) declared[n->name] = n->specs[0];
  }
  for (const auto& [name, value] : arrays) {
    JANUS_CHECK(std::find(args.begin(), args.end(), name) != args.end(), ValueError,
                "Predictor: '{}' holds '{}', which the graph '{}' does not use", params_file, name,
                symbol_file);
    auto it = declared.find(name);
    if (it != declared.end()) {
      JANUS_CHECK(it->second.shape == value.shape(), ShapeError,
                  "Predictor: parameter '{}' in '{}' has shape {}, the graph '{}' expects {}", name,
                  params_file, value.shape(), symbol_file, it->second.shape);
    }
    params_[name] = value;
  }
  for (const std::string& name : args) {
    const bool is_input =
        std::find(input_names_.begin(), input_names_.end(), name) != input_names_.end();
    JANUS_CHECK(is_input || params_.contains(name), ValueError,
                "Predictor: the graph '{}' needs '{}', which is neither an input nor in '{}'",
                symbol_file, name, params_file);
  }
}

Predictor::~Predictor() = default;

int Predictor::compilations() const { return cache_->compilations; }

std::vector<NDArray> Predictor::run(std::span<const NDArray> inputs) {
  JANUS_CHECK(inputs.size() == input_names_.size(), ValueError,
              "Predictor: got {} inputs, expected {} ({})", inputs.size(), input_names_.size(),
              fmt::join(input_names_, ", "));
  std::vector<Shape> key;
  for (const NDArray& x : inputs) key.push_back(x.shape());
  graph::CachedOp* op = nullptr;
  for (auto& [shapes, compiled] : cache_->ops) {
    if (shapes == key) op = compiled.get();
  }
  std::vector<NDArray> args;
  for (const std::string& name : arg_names_) {
    auto it = std::find(input_names_.begin(), input_names_.end(), name);
    args.push_back(it != input_names_.end() ? inputs[static_cast<size_t>(it - input_names_.begin())]
                                            : params_.at(name));
  }
  if (op == nullptr) {
    std::vector<ops::TensorSpec> specs;
    for (const NDArray& a : args) specs.push_back({a.shape(), a.dtype(), a.device()});
    cache_->ops.emplace_back(key, std::make_unique<graph::CachedOp>(symbol_, std::move(specs),
                                                                    graph::CachedOpOptions{}));
    ++cache_->compilations;
    op = cache_->ops.back().second.get();
  }
  return (*op)(args);
}

}  // namespace janus::deploy
