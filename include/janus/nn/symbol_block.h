// SymbolBlock: a block whose forward is a graph (an exported model, or any Symbol), with the
// graph's non-input arguments as its parameters, so that it can be called, hybridized,
// fine-tuned with a Trainer and saved like any block. Layer: nn.
//
//   auto net = nn::SymbolBlock::imports("lenet-symbol.json", {"data"}, "lenet-0010.safetensors");
//   NDArray y = (*net)(x);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "janus/graph/symbol.h"
#include "janus/nn/block.h"

namespace janus::nn {

class SymbolBlock : public Block {
 public:
  /// `outputs` computed from the argument `input_name`; every other argument becomes a
  /// parameter with that name (shape from the graph's declaration, or deferred).
  SymbolBlock(graph::Symbol outputs, std::string input_name = "data");

  /// Loads an exported model: the graph file, then the parameters from `params_file` (when
  /// given) onto `device`. Errors name the file and the problem (see deploy::Predictor).
  static std::shared_ptr<SymbolBlock> imports(const std::string& symbol_file,
                                              const std::vector<std::string>& input_names,
                                              const std::string& params_file = "",
                                              Device device = cpu());

  /// The graph's first output for input x.
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  struct Compiled;
  graph::Symbol symbol_;
  std::string input_name_;
  std::vector<std::string> arg_names_;
  std::vector<std::shared_ptr<Compiled>> compiled_;
};

}  // namespace janus::nn
