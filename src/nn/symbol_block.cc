// SymbolBlock: a graph as a block.
#include "janus/nn/symbol_block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/trace.h"

namespace janus::nn {

struct SymbolBlock::Compiled {
  Shape shape;
  DType dtype;
  std::unique_ptr<graph::CachedOp> op;
};

SymbolBlock::SymbolBlock(graph::Symbol outputs, std::string input_name)
    : Block("symbolblock"), symbol_(std::move(outputs)), input_name_(std::move(input_name)) {
  arg_names_ = symbol_.list_arguments();
  JANUS_CHECK(std::find(arg_names_.begin(), arg_names_.end(), input_name_) != arg_names_.end(),
              ValueError, "SymbolBlock: the graph has no argument named '{}'; it has [{}]",
              input_name_, fmt::join(arg_names_, ", "));
  for (const graph::NodePtr& n : symbol_.graph().arguments()) {
    if (n->name == input_name_) continue;
    register_param(n->name, n->specs.empty() ? Shape{0} : n->specs[0].shape);
  }
}

std::shared_ptr<SymbolBlock> SymbolBlock::imports(const std::string& symbol_file,
                                                  const std::vector<std::string>& input_names,
                                                  const std::string& params_file, Device device) {
  JANUS_CHECK(input_names.size() == 1, NotImplementedError,
              "SymbolBlock::imports: blocks take one input, got {} input names",
              input_names.size());
  auto sym = graph::Symbol::load(symbol_file);
  auto block = std::make_shared<SymbolBlock>(std::move(sym), input_names[0]);
  if (params_file.empty()) return block;
  const ParameterDict params = block->collect_params();
  for (const auto& [name, value] : graph::load_safetensors(params_file, nullptr, device)) {
    JANUS_CHECK(params.contains(name), ValueError,
                "SymbolBlock::imports: '{}' holds '{}', which the graph '{}' does not use",
                params_file, name, symbol_file);
    const ParameterPtr& p = params.at(name);
    JANUS_CHECK(p->shape().numel() == 0 || p->shape() == value.shape(), ShapeError,
                "SymbolBlock::imports: parameter '{}' in '{}' has shape {}, the graph '{}' "
                "expects {}",
                name, params_file, value.shape(), symbol_file, p->shape());
    p->set_data(value);
  }
  for (const auto& [name, p] : params) {
    JANUS_CHECK(p->initialized(), ValueError,
                "SymbolBlock::imports: the graph '{}' needs parameter '{}', which '{}' lacks",
                symbol_file, name, params_file);
  }
  return block;
}

NDArray SymbolBlock::forward(const NDArray& x) {
  Compiled* c = nullptr;
  for (auto& e : compiled_) {
    if (e->shape == x.shape() && e->dtype == x.dtype()) c = e.get();
  }
  const ParameterDict params = collect_params();
  std::vector<NDArray> args;
  std::vector<ops::TensorSpec> specs;
  for (const std::string& name : arg_names_) {
    args.push_back(name == input_name_ ? x : params.at(name)->data());
    specs.push_back({args.back().shape(), args.back().dtype(), args.back().device()});
  }
  if (c == nullptr) {
    auto fresh = std::make_shared<Compiled>();
    fresh->shape = x.shape();
    fresh->dtype = x.dtype();
    fresh->op = std::make_unique<graph::CachedOp>(symbol_, specs);
    compiled_.push_back(fresh);
    c = fresh.get();
  }
  // Under autograd or inside a trace, node by node (recorded); otherwise one engine operation.
  const bool by_node = autograd::is_recording() || graph::is_tracing();
  return (by_node ? c->op->run_imperative(args) : (*c->op)(args)).at(0);
}

std::string SymbolBlock::describe() const {
  return fmt::format("SymbolBlock({} -> {})", input_name_, fmt::join(symbol_.list_outputs(), ", "));
}

}  // namespace janus::nn
