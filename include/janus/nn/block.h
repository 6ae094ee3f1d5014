// Block: the base of layers and models (Gluon's Block). A block owns parameters and child
// blocks; `forward` computes its output from its input. Layer: nn.
//
//   auto net = std::make_shared<nn::Sequential>();
//   net->add(std::make_shared<nn::Dense>(256, "relu"));
//   net->add(std::make_shared<nn::Dense>(10));
//   net->initialize(nn::Xavier());
//   NDArray y = (*net)(x);                  // shapes of the first layer inferred from x
//
// A block with several inputs or outputs overrides the list form of forward:
//
//   std::vector<NDArray> forward(const std::vector<NDArray>& xs) override {
//     return {xs[0] + xs[1], xs[0] * xs[1]};
//   }
//   std::vector<NDArray> ys = (*block)({a, b});   // hybridized too: one graph, two outputs
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/nn/initializer.h"
#include "janus/nn/parameter.h"

namespace janus::graph {
class Symbol;
}

namespace janus::nn {

/// hybridize() options (Gluon's): see graph::CachedOpOptions.
struct HybridizeOptions {
  /// Intermediate buffers allocated once and reused by every call.
  bool static_alloc = false;
  /// Gluon's promise that input shapes stay fixed. Each compiled graph already keeps its
  /// shapes and memory plan for its input signature, so another shape (a smaller last batch)
  /// compiles and caches another graph, as MXNet re-plans: accepted, and changes nothing.
  bool static_shape = false;
  /// Compiled graphs kept per block (one per input signature); the oldest goes first.
  size_t cache_size = 8;
};

struct HybridState;

class Block {
 public:
  /// `prefix` names the kind of block ("dense"); the block's name adds a per-kind counter
  /// ("dense0", "dense1", ...) for messages and printing.
  explicit Block(const std::string& prefix);
  virtual ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  /// The outputs for the inputs `xs` (Gluon's forward(*args)): override this form for a block
  /// with several inputs or outputs. The default runs the one-array form on a single input.
  /// Training-dependent layers read autograd::is_training().
  virtual std::vector<NDArray> forward(const std::vector<NDArray>& xs);
  /// The output for input `x`: override this form for a block with one input and one output
  /// (most layers). The default runs the list form and expects one output. A block overrides
  /// at least one of the two; calling one that overrides neither raises NotImplementedError.
  virtual NDArray forward(const NDArray& x);

  /// forward(xs), or, once hybridized, the compiled graph of forward for the inputs' signature
  /// (each input's shape, dtype and device, and the training mode), traced on the first call
  /// with that signature.
  std::vector<NDArray> operator()(const std::vector<NDArray>& xs);
  /// The one-input, one-output call: operator()({x}), which must give one output.
  NDArray operator()(const NDArray& x);

  /// Every block is hybridizable (Gluon's HybridBlock): with `active`, calls run the traced and
  /// optimized graph of `forward` (see graph::CachedOp); hybridize(false) returns to imperative
  /// execution. Side effects in forward (printing) happen only while tracing; reading a value
  /// there (item, to_vector, printing an array) raises TraceError. Applies to the children too.
  void hybridize(bool active = true, const HybridizeOptions& options = {});
  bool is_hybridized() const;
  /// Times forward was traced (a first call with a new signature). Each trace is logged at info
  /// level (JANUS_LOG_LEVEL=info) with its reason.
  int64_t trace_count() const;
  /// The reason of the last trace ("first call", "new input shape [..]", ...).
  std::string last_trace_reason() const;
  /// The graph of the most recent hybridized call; ValueError before the first one.
  graph::Symbol symbol() const;
  /// Writes `prefix`-symbol.json (the graph of the most recent hybridized call; its inputs are
  /// named "data", or "data0", "data1", ... for several, see graph::default_input_names) and
  /// `prefix`-NNNN.safetensors (its parameters, the replicas on that call's device, and its
  /// constants; NNNN = epoch), which
  /// SymbolBlock::imports and deploy::Predictor load without this code. Gluon's `export`.
  void export_model(const std::string& prefix, int epoch = 0) const;

  /// "dense0": unique in the process, for messages.
  const std::string& name() const { return name_; }
  /// One line describing the block, e.g. "Dense(784 -> 256, relu)".
  virtual std::string describe() const;
  /// The block tree, one line per block, indented.
  std::string summary() const;

  /// Every parameter of this block and its descendants by structural name ("0.weight"),
  /// optionally only those whose name matches the regular expression `select`.
  ParameterDict collect_params(const std::string& select = "") const;
  /// Initialises every parameter (deferred for those whose shape waits for the first input).
  void initialize(const InitializerPtr& init = Uniform(), Device device = cpu(),
                  bool force_reinit = false);
  /// One replica of every parameter per device (data parallelism): the block called on an
  /// input on one of them uses that device's replicas (see Parameter::initialize).
  void initialize(const InitializerPtr& init, const std::vector<Device>& devices,
                  bool force_reinit = false);
  /// Moves every parameter to `devices` (Gluon's reset_ctx; see Parameter::reset_devices).
  void reset_devices(const std::vector<Device>& devices);
  void reset_device(Device device) { reset_devices({device}); }

  const std::vector<std::pair<std::string, std::shared_ptr<Block>>>& children() const {
    return children_;
  }
  const std::vector<std::pair<std::string, ParameterPtr>>& own_params() const { return params_; }

 protected:
  /// Declares a parameter called `local` ("weight"); its display name is "<block>_<local>".
  ParameterPtr register_param(const std::string& local, Shape shape, InitializerPtr init = nullptr,
                              autograd::GradReq req = autograd::GradReq::kWrite);
  /// Declares a child block; its structural name is `local`, or its position among the
  /// children when empty.
  template <typename B>
  std::shared_ptr<B> register_child(std::shared_ptr<B> child, std::string local = "") {
    add_child(child, std::move(local));
    return child;
  }

 private:
  void add_child(std::shared_ptr<Block> child, std::string local);
  std::vector<NDArray> call_hybridized(const std::vector<NDArray>& xs);
  void collect_into(const std::string& prefix, ParameterDict& out) const;
  void summary_into(const std::string& label, int depth, std::string& out) const;

  std::string name_;
  std::unique_ptr<HybridState> hybrid_;
  std::vector<std::pair<std::string, std::shared_ptr<Block>>> children_;
  std::vector<std::pair<std::string, ParameterPtr>> params_;
};

using BlockPtr = std::shared_ptr<Block>;

/// Every block hybridizes, so Gluon's HybridBlock is Block (the names stay for readers of
/// Gluon code).
using HybridBlock = Block;

/// Runs its children one after another (also Gluon's HybridSequential).
class Sequential : public Block {
 public:
  Sequential();
  /// Appends blocks; returns this for chaining.
  Sequential& add(BlockPtr block);
  template <typename... B>
  Sequential& add(BlockPtr first, B&&... rest) {
    add(std::move(first));
    return add(std::forward<B>(rest)...);
  }
  using Block::forward;
  /// Each child's outputs are the next one's inputs (a child may take and give several).
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override;
  size_t size() const { return children().size(); }
  const BlockPtr& operator[](size_t i) const;
  std::string describe() const override { return "Sequential"; }
};
using HybridSequential = Sequential;

/// Runs every child on the same input and concatenates their outputs along `axis` (Gluon's
/// HybridConcurrent).
class Concurrent : public Block {
 public:
  explicit Concurrent(int64_t axis = -1);
  Concurrent& add(BlockPtr block);
  using Block::forward;
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  int64_t axis_;
};
using HybridConcurrent = Concurrent;

}  // namespace janus::nn
