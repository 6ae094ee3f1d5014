// CachedOp: the executor of a compiled graph. It runs the pass pipeline once, plans memory
// (liveness-based buffer reuse and in-place updates) and then runs each call as ONE engine
// operation that calls the nodes' kernels one after another on planned buffers. Layer: graph.
//
//   CachedOp op(symbol, {{x_shape, kFloat32, cpu()}, {w_shape, kFloat32, cpu()}});
//   std::vector<NDArray> y = op({x, w});        // returns at once, like any operator
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "janus/graph/symbol.h"

namespace janus::graph {

struct CachedOpOptions {
  /// Allocate the intermediate buffers once, at compile time, and reuse them for every call
  /// (consecutive calls then run one after another).
  bool static_alloc = false;
  /// Gluon's static_shape: see nn::HybridizeOptions (a compiled graph has fixed shapes anyway).
  bool static_shape = false;
};

/// What memory planning decided, for tests and `summary`.
struct MemoryPlan {
  int64_t entries = 0;          // intermediate values
  int64_t buffers = 0;          // buffers they share
  int64_t inplace = 0;          // outputs written over an input
  int64_t argument_views = 0;   // view steps of an argument, bound as views (no step, no copy)
  int64_t output_views = 0;     // view steps that are graph outputs, bound as views of an output
  int64_t planned_bytes = 0;    // bytes of the buffers
  int64_t unplanned_bytes = 0;  // bytes if every value had its own buffer
};

class CachedOp {
 public:
  /// Compiles `symbol` for arguments of `arg_specs` (in list_arguments order).
  CachedOp(const Symbol& symbol, std::vector<ops::TensorSpec> arg_specs,
           CachedOpOptions options = {});
  ~CachedOp();
  CachedOp(const CachedOp&) = delete;
  CachedOp& operator=(const CachedOp&) = delete;

  /// Runs the graph on `args` (list_arguments order); returns the outputs at once. ShapeError
  /// or TypeError naming the argument when one does not match the compiled specs.
  std::vector<NDArray> operator()(std::span<const NDArray> args) const;

  /// As above, but output i is written into outs[i] where that is defined (an array of output
  /// i's spec that shares no storage with an argument or another of `outs`): a training graph
  /// writes its gradients straight into the parameters' gradient buffers, without a new array
  /// and a copy. An output that no step of the call writes (an argument or constant returned
  /// as it is, a view of an argument or of a value the call computes, an output that repeats
  /// an earlier one) is returned as it is and outs[i] is left alone: a caller tells which by the
  /// returned array's storage. `outs` is empty or has one entry per output; ValueError, ShapeError,
  /// TypeError or DeviceError otherwise.
  std::vector<NDArray> operator()(std::span<const NDArray> args,
                                  std::span<const NDArray> outs) const;

  /// Runs the graph node by node through ops::invoke (so autograd records each call).
  std::vector<NDArray> run_imperative(std::span<const NDArray> args) const;

  /// The optimized graph.
  const Graph& graph() const;
  const std::vector<std::string>& argument_names() const;
  const std::vector<ops::TensorSpec>& output_specs() const;
  const MemoryPlan& memory_plan() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace janus::graph
