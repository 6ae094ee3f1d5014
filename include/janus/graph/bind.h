// Binding a graph's arguments: to the model's inputs by name, every other argument to a
// parameter. The one parameter binder of Janus: hybridized blocks, SymbolBlock and
// deploy::Predictor all bind here, and the two loaders of exported models (SymbolBlock::imports,
// Predictor) check a parameters file against the graph here. Layer: graph.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/symbol.h"

namespace janus::graph {

/// The input names that export writes for a model with `n` inputs: "data" for one (the
/// convenient case, and what Gluon and MXNet name it), "data0", "data1", ... for several.
std::vector<std::string> default_input_names(size_t n);

/// Where an argument's value comes from at a call.
struct ArgumentSource {
  enum class Kind : uint8_t { kInput, kParameter };
  Kind kind;
  size_t index;  // kInput: position among the call's inputs; kParameter: in parameter_names

  bool operator==(const ArgumentSource&) const = default;
};

/// A graph's arguments, bound once.
struct ArgumentBinding {
  std::vector<ArgumentSource> sources;       // per argument, in list_arguments order
  std::vector<std::string> parameter_names;  // per parameter, in list_arguments order

  /// The arguments of one call (list_arguments order) from its inputs and the parameters'
  /// values (in parameter_names order).
  std::vector<NDArray> gather(std::span<const NDArray> inputs,
                              std::span<const NDArray> parameters) const;
};

/// Binds the arguments `arg_names`: those named in `input_names` to the inputs, the others to
/// parameters. With `require_inputs`, ValueError naming `who` when an input name is not an
/// argument (a loaded model's input); without, such an input is one the graph does not read.
ArgumentBinding bind_arguments(const std::vector<std::string>& arg_names,
                               const std::vector<std::string>& input_names, std::string_view who,
                               bool require_inputs = true);

/// The values of `binding`'s parameters (in parameter_names order) from `arrays`, read from
/// `params_file` for the graph `symbol` of `symbol_file`. ValueError naming both files when
/// `arrays` holds one that the graph does not use or lacks one that it needs; ShapeError when
/// one's shape differs from the shape that the graph declares for it.
std::vector<NDArray> bind_parameters(const Symbol& symbol, const ArgumentBinding& binding,
                                     const NamedArrays& arrays, std::string_view who,
                                     std::string_view symbol_file, std::string_view params_file);

}  // namespace janus::graph
