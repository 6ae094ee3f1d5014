// Predictor: runs an exported model (PREFIX-symbol.json + PREFIX-NNNN.safetensors, or an Apache
// MXNet 1.x model: PREFIX-symbol.json + PREFIX-NNNN.params) without the code that built it. Layer:
// deploy (uses graph, ops, engine, core only; libjanus_deploy.so holds exactly those layers).
//
//   janus::deploy::Predictor p("lenet-symbol.json", "lenet-0010.safetensors");
//   NDArray y = p.run(x);                     // compiled for x's shape on first use, cached
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/graph/bind.h"
#include "janus/graph/graph_cache.h"
#include "janus/graph/symbol.h"

namespace janus::graph {
class CachedOp;
}

namespace janus::deploy {

class Predictor {
 public:
  /// Loads the graph and its parameters onto `device`, each in Janus's format or MXNet's
  /// (detected from the contents: graph::load_symbol_file, graph::load_params_file). FormatError
  /// naming the file for a malformed one; ValueError naming the argument when the parameters lack
  /// one that the graph needs (other than the inputs), or hold one that the graph does not have, or
  /// when an input name is not an argument; ShapeError when a parameter's shape differs from the
  /// one recorded in the graph (see graph::bind_parameters).
  Predictor(const std::string& symbol_file, const std::string& params_file,
            std::vector<std::string> input_names = graph::default_input_names(1),
            Device device = cpu());
  ~Predictor();

  /// Runs the graph on `inputs` (in input_names order): compiled for their signature (shapes,
  /// dtypes, devices) on first use and kept (the 8 most recently used), then one engine operation
  /// per call. Returns at once. Each compiled signature keeps its intermediate buffers (static
  /// allocation), so calls on one Predictor run one after another; a call on the same input
  /// arrays as the call before, whose outputs the caller no longer holds, reuses that call's
  /// outputs' memory and allocates nothing. Outputs that the caller holds are never overwritten.
  std::vector<NDArray> run(std::span<const NDArray> inputs);
  NDArray run(const NDArray& input) { return run(std::span<const NDArray>(&input, 1)).at(0); }

  const std::vector<std::string>& input_names() const { return input_names_; }
  std::vector<std::string> output_names() const { return symbol_.list_outputs(); }
  const graph::Symbol& symbol() const { return symbol_; }
  /// Times a graph was compiled (one per new input signature).
  int compilations() const;

 private:
  graph::Symbol symbol_;
  std::vector<std::string> input_names_;
  graph::ArgumentBinding binding_;
  std::vector<NDArray> params_;  // per binding_.parameter_names
  graph::GraphCache<graph::CachedOp> cache_;
};

}  // namespace janus::deploy
