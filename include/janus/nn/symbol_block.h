// SymbolBlock: a block whose forward is a graph (an exported model, or any Symbol), with the
// graph's non-input arguments as its parameters, so that it can be called, hybridized,
// fine-tuned with a Trainer and saved like any block. Layer: nn.
//
//   auto net = nn::SymbolBlock::imports("lenet-symbol.json", {"data"}, "lenet-0010.safetensors");
//   NDArray y = (*net)(x);
//   std::vector<NDArray> ys = (*two_in_two_out)({a, b});   // inputs in input_names order
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "janus/graph/bind.h"
#include "janus/graph/graph_cache.h"
#include "janus/graph/symbol.h"
#include "janus/nn/block.h"

namespace janus::graph {
class CachedOp;
}

namespace janus::nn {

class SymbolBlock : public Block {
 public:
  /// `outputs` computed from the arguments `input_names` (the block's inputs, in that order);
  /// every other argument becomes a parameter with that name (shape from the graph's
  /// declaration, or deferred). ValueError when an input name is not an argument.
  SymbolBlock(graph::Symbol outputs,
              std::vector<std::string> input_names = graph::default_input_names(1));

  /// Loads an exported model: the graph file, then the parameters from `params_file` (when
  /// given) onto `device`, each in Janus's format or Apache MXNet 1.x's (PREFIX-symbol.json +
  /// PREFIX-NNNN.params; detected from the contents, see graph/mxnet_import.h). Errors name
  /// the file and the problem (see graph::bind_parameters).
  static std::shared_ptr<SymbolBlock> imports(const std::string& symbol_file,
                                              const std::vector<std::string>& input_names,
                                              const std::string& params_file = "",
                                              Device device = cpu());

  using Block::forward;
  /// Every output of the graph for the inputs xs (in input_names order); compiled per input
  /// signature (shape, dtype, device).
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  std::string describe() const override;

 private:
  graph::Symbol symbol_;
  std::vector<std::string> input_names_;
  graph::ArgumentBinding binding_;
  graph::GraphCache<graph::CachedOp> compiled_;
};

}  // namespace janus::nn
