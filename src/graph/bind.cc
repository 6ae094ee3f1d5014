// Binding a graph's arguments to a model's inputs and parameters.
#include "janus/graph/bind.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "janus/base/error.h"

namespace janus::graph {

std::vector<std::string> default_input_names(size_t n) {
  if (n == 1) return {"data"};
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(fmt::format("data{}", i));
  return names;
}

std::vector<NDArray> ArgumentBinding::gather(std::span<const NDArray> inputs,
                                             std::span<const NDArray> parameters) const {
  std::vector<NDArray> args;
  args.reserve(sources.size());
  for (const ArgumentSource& s : sources) {
    args.push_back(s.kind == ArgumentSource::Kind::kInput ? inputs[s.index] : parameters[s.index]);
  }
  return args;
}

ArgumentBinding bind_arguments(const std::vector<std::string>& arg_names,
                               const std::vector<std::string>& input_names, std::string_view who,
                               bool require_inputs) {
  for (const std::string& name : require_inputs ? input_names : std::vector<std::string>{}) {
    JANUS_CHECK(std::find(arg_names.begin(), arg_names.end(), name) != arg_names.end(), ValueError,
                "{}: the graph has no argument named '{}' (an input); its arguments are [{}]", who,
                name, fmt::join(arg_names, ", "));
  }
  ArgumentBinding b;
  for (const std::string& name : arg_names) {
    auto it = std::find(input_names.begin(), input_names.end(), name);
    if (it != input_names.end()) {
      b.sources.push_back(
          {ArgumentSource::Kind::kInput, static_cast<size_t>(it - input_names.begin())});
      continue;
    }
    b.sources.push_back({ArgumentSource::Kind::kParameter, b.parameter_names.size()});
    b.parameter_names.push_back(name);
  }
  return b;
}

std::vector<NDArray> bind_parameters(const Symbol& symbol, const ArgumentBinding& binding,
                                     const NamedArrays& arrays, std::string_view who,
                                     std::string_view symbol_file, std::string_view params_file) {
  std::map<std::string, ops::TensorSpec> declared;
  for (const NodePtr& n : symbol.graph().arguments()) {
    if (!n->specs.empty()) declared[n->name] = n->specs[0];
  }
  const std::vector<std::string>& names = binding.parameter_names;
  std::vector<NDArray> values(names.size());
  for (const auto& [name, value] : arrays) {
    auto it = std::find(names.begin(), names.end(), name);
    JANUS_CHECK(it != names.end(), ValueError,
                "{}: '{}' holds '{}', which the graph '{}' does not use as a parameter", who,
                params_file, name, symbol_file);
    auto d = declared.find(name);
    JANUS_CHECK(
        d == declared.end() || d->second.shape.numel() == 0 || d->second.shape == value.shape(),
        ShapeError, "{}: parameter '{}' in '{}' has shape {}, the graph '{}' expects {}", who, name,
        params_file, value.shape(), symbol_file, d->second.shape);
    values[static_cast<size_t>(it - names.begin())] = value;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    JANUS_CHECK(values[i].defined(), ValueError,
                "{}: the graph '{}' needs parameter '{}', which is neither an input nor in '{}'",
                who, symbol_file, names[i], params_file);
  }
  return values;
}

}  // namespace janus::graph
