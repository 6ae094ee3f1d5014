// What a hybridized block keeps: its compiled graphs per input signature. Private to src/nn.
#pragma once

#include <fmt/format.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "janus/graph/cached_op.h"
#include "janus/nn/block.h"

namespace janus::nn {

struct Signature {
  Shape shape;
  DType dtype;
  Device device;
  bool training;

  bool operator==(const Signature& o) const {
    return shape == o.shape && dtype == o.dtype && device == o.device && training == o.training;
  }
  std::string to_string() const {
    return fmt::format("{} {} on {}, {}", shape, dtype_name(dtype), device,
                       training ? "training" : "inference");
  }
};

/// A signature's graphs for training: forward (outputs, then the values backward needs) and
/// backward (the gradients of `wrt`), both compiled.
struct TrainPlan {
  std::vector<std::string> wrt;
  std::vector<size_t> wrt_index;  // position of each wrt name among the entry's arguments
  std::shared_ptr<graph::CachedOp> forward, backward;
  /// Where each argument of forward / backward comes from: >= 0 an argument of the entry;
  /// -1 - k the saved value k; kHeadGrad the output's gradient.
  std::vector<int64_t> forward_args, backward_args;
  static constexpr int64_t kHeadGrad = INT64_MIN;
};

struct HybridState {
  struct Entry {
    Signature sig;
    graph::Symbol symbol;
    std::shared_ptr<graph::CachedOp> op;
    /// Per argument of op: its parameter (null for the input "data").
    std::vector<ParameterPtr> params;
    /// Built at the first recorded call: [0] when the input needs no gradient, [1] when it does.
    std::shared_ptr<TrainPlan> train[2];
    uint64_t last_used = 0;
  };
  bool active = false;
  HybridizeOptions options;
  std::vector<Entry> cache;
  uint64_t clock = 0;
  int64_t traces = 0;
  std::string reason;
  const Entry* last = nullptr;
};

}  // namespace janus::nn
