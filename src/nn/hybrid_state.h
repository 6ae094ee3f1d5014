// What a hybridized block keeps: its compiled graphs per input signature. Private to src/nn.
#pragma once

#include <fmt/format.h>

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

struct HybridState {
  struct Entry {
    Signature sig;
    graph::Symbol symbol;
    std::shared_ptr<graph::CachedOp> op;
    /// Per argument of op: its parameter (null for the input "data").
    std::vector<ParameterPtr> params;
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
