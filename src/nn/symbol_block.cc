// SymbolBlock: a graph as a block.
#include "janus/nn/symbol_block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/mxnet_import.h"
#include "janus/graph/trace.h"

namespace janus::nn {

SymbolBlock::SymbolBlock(graph::Symbol outputs, std::vector<std::string> input_names)
    : Block("symbolblock"), symbol_(std::move(outputs)), input_names_(std::move(input_names)) {
  binding_ = graph::bind_arguments(symbol_.list_arguments(), input_names_, "SymbolBlock");
  // Parameters in binding order: own_params()[k] is parameter k of the binding.
  for (const graph::NodePtr& n : symbol_.graph().arguments()) {
    if (std::find(input_names_.begin(), input_names_.end(), n->name) != input_names_.end()) {
      continue;
    }
    register_param(n->name, n->specs.empty() ? Shape{0} : n->specs[0].shape);
  }
}

std::shared_ptr<SymbolBlock> SymbolBlock::imports(const std::string& symbol_file,
                                                  const std::vector<std::string>& input_names,
                                                  const std::string& params_file, Device device) {
  graph::Symbol symbol = graph::load_symbol_file(symbol_file);
  if (params_file.empty()) return std::make_shared<SymbolBlock>(symbol, input_names);
  const graph::NamedArrays arrays = graph::load_params_file(params_file, device);
  // Graphs that do not record their parameters' shapes (MXNet's rarely do) take them from the
  // file, so that the block's parameters are declared with them.
  for (const graph::NodePtr& n : symbol.graph().arguments()) {
    if (!n->specs.empty()) continue;
    for (const auto& [name, a] : arrays) {
      if (name == n->name) n->specs.push_back({a.shape(), a.dtype(), cpu()});
    }
  }
  auto block = std::make_shared<SymbolBlock>(symbol, input_names);
  const std::vector<NDArray> values = graph::bind_parameters(
      block->symbol_, block->binding_, arrays, "SymbolBlock::imports", symbol_file, params_file);
  for (size_t k = 0; k < values.size(); ++k) block->own_params()[k].second->set_data(values[k]);
  return block;
}

std::vector<NDArray> SymbolBlock::forward(const std::vector<NDArray>& xs) {
  JANUS_CHECK(xs.size() == input_names_.size(), ValueError, "{}: got {} inputs, expected {} ({})",
              name(), xs.size(), input_names_.size(), fmt::join(input_names_, ", "));
  JANUS_CHECK(!xs.empty(), ValueError, "{}: forward takes at least one input", name());
  std::vector<NDArray> values;
  for (const auto& [local, p] : own_params()) values.push_back(p->data(xs[0].device()));
  const std::vector<NDArray> args = binding_.gather(xs, values);
  // Keyed by every argument's shape, dtype and device: the inputs', and the parameters' (which
  // set_data may move).
  const graph::InputSignature sig = graph::InputSignature::of(args);
  std::shared_ptr<graph::CachedOp> op = compiled_.find(sig);
  if (!op) {
    std::vector<ops::TensorSpec> specs;
    for (const NDArray& a : args) specs.push_back({a.shape(), a.dtype(), a.device()});
    op = compiled_.insert(sig, std::make_shared<graph::CachedOp>(symbol_, std::move(specs)));
  }
  // Under autograd or inside a trace, node by node (recorded); otherwise one engine operation.
  const bool by_node = autograd::is_recording() || graph::is_tracing();
  return by_node ? op->run_imperative(args) : (*op)(args);
}

std::string SymbolBlock::describe() const {
  return fmt::format("SymbolBlock({} -> {})", fmt::join(input_names_, ", "),
                     fmt::join(symbol_.list_outputs(), ", "));
}

}  // namespace janus::nn
