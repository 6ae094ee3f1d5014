// What a hybridized block keeps: its compiled graphs per input signature (in the graph layer's
// one cache), each with its argument binding and, once recorded, its training graphs. Private
// to src/nn.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "janus/graph/bind.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/gradient.h"
#include "janus/graph/graph_cache.h"
#include "janus/nn/block.h"

namespace janus::nn {

/// A signature's graphs for training: forward (outputs, then the values backward needs) and
/// backward (the gradients of the arguments that need them), both compiled.
struct TrainPlan {
  std::vector<size_t> wrt_index;  // per gradient of backward: its argument of the entry
  std::shared_ptr<graph::CachedOp> forward, backward;
  size_t num_outputs = 0;  // forward's first outputs are the block's; the rest are saved
  /// Per argument of forward: its argument of the entry.
  std::vector<size_t> forward_args;
  /// Per argument of backward: an argument of the entry, a saved value or an output gradient.
  std::vector<graph::BackwardArg> backward_args;
};

/// One traced signature.
struct HybridEntry {
  graph::Symbol symbol;
  std::vector<ops::TensorSpec> arg_specs;  // per argument of the symbol
  /// The graph for calls that record nothing, compiled at the first such call: a training
  /// loop runs the training graphs only.
  std::shared_ptr<graph::CachedOp> op;
  graph::ArgumentBinding binding;    // inputs "data"/"data<i>", then the parameters
  std::vector<ParameterPtr> params;  // per binding.parameter_names
  /// Built at the first recorded call, per set of inputs that need a gradient.
  std::map<std::vector<bool>, std::shared_ptr<TrainPlan>> train;
};

struct HybridState {
  bool active = false;
  HybridizeOptions options;
  graph::GraphCache<HybridEntry> cache;
  std::string reason;
  std::shared_ptr<const HybridEntry> last;
  std::optional<graph::InputSignature> last_sig;
};

}  // namespace janus::nn
