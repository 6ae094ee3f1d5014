// Trainer (Gluon's gluon.Trainer): applies an optimizer to a set of parameters after backward.
// Layer: optim.
//
//   auto net = std::make_shared<nn::Sequential>();
//   net->add(std::make_shared<nn::Dense>(10));
//   net->initialize(nn::Xavier());
//   optim::Trainer trainer(net->collect_params(), optim::make_optimizer("sgd", 0.1));
//   nn::SoftmaxCrossEntropyLoss loss_fn;
//   for (auto& [x, y] : loader) {
//     NDArray loss;
//     {
//       autograd::RecordScope record;
//       loss = loss_fn((*net)(x), y);
//     }
//     autograd::backward(loss);
//     trainer.step(x.shape()[0]);         // gradients are sums over the batch: rescaled by 1/64
//   }
//   trainer.save_states("opt.safetensors");   // momentum, Adam moments, update counts
//
// Data parallelism: parameters with replicas on several devices (Block::initialize(init,
// devices)) have their gradients summed through a KVStore at each step, and every replica gets
// the same update, so the replicas stay identical:
//   net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
//   optim::Trainer trainer(net->collect_params(), sgd, kvstore::create("device"));
//   ... one forward and backward per slice (parallel::split_and_load), then
//   trainer.step(batch_size);                 // the whole batch's size
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "janus/nn/parameter.h"
#include "janus/optim/kvstore.h"
#include "janus/optim/optimizer.h"

namespace janus::optim {

class GradientBuckets;

class Trainer {
 public:
  /// `params` by name (e.g. Block::collect_params()); a parameter listed under two names (a
  /// shared layer) is updated once. The optimizer's rescale_grad at this point is the scale
  /// that step() divides by the batch size (1 unless set).
  ///
  /// The store is set up here when every trained parameter has its value (else at the first
  /// step): across processes, each worker's parameters then become rank 0's.
  /// `kvstore` sums the gradients of parameters held on several devices (null: a "device"
  /// store is created when a parameter has several replicas, as Gluon does). Parameter i is
  /// key i. With `update_on_kvstore` the store holds the weights and applies the optimizer
  /// (the replicas pull the result); otherwise the summed gradient comes back to every replica
  /// and each replica applies the same update on its own device.
  Trainer(const nn::ParameterDict& params, OptimizerPtr optimizer,
          kvstore::KVStorePtr kvstore = nullptr, bool update_on_kvstore = false);

  /// allreduce_grads() then update(batch_size): one update of every parameter whose grad_req
  /// is not null (BatchNorm's running statistics are skipped), with rescale_grad = scale /
  /// batch_size. Checks every parameter first: one that is not initialised, or whose shape is
  /// still unknown (no forward and backward ran through it), is a ValueError naming it, and
  /// then nothing is updated. Pushes the work and returns at once. With replicas updated on
  /// their devices, each gradient bucket's sums reach its gradients and its parameters'
  /// updates in one engine operation per device (instead of a copy-back and an update per
  /// parameter); the results are those of allreduce_grads() then update().
  void step(int64_t batch_size);
  /// Sums each parameter's gradients over its replicas, into every replica (through the
  /// store; higher priority for the parameters a forward pass reaches first). Nothing to do
  /// with one replica each, or when the store updates (update_on_kvstore).
  void allreduce_grads();
  /// The optimizer step of step(), after allreduce_grads(): with update_on_kvstore, pushes the
  /// gradients to the store and pulls the updated weights into every replica; otherwise every
  /// parameter's update runs in one engine operation per device (the same kernels, in the
  /// order of the parameters, with the same results as one operation each).
  void update(int64_t batch_size);

  /// Gradients are reduced in buckets of about this many bytes (several small gradients as one
  /// flat array per device; see docs/design/parallel.md). Set before the first step;
  /// ValueError after it. 0: one bucket per parameter.
  void set_bucket_bytes(size_t bytes);
  static constexpr size_t kDefaultBucketBytes = size_t{1} << 20;
  /// The parameter indices of each bucket, in reduction order (empty before the first step or
  /// without a store).
  std::vector<std::vector<size_t>> bucket_layout() const;

  /// The store in use (null while no parameter has several replicas and none was given).
  const kvstore::KVStorePtr& kvstore() const { return kvstore_; }
  bool update_on_kvstore() const { return update_on_kvstore_; }

  double learning_rate() const { return optimizer_->learning_rate(); }
  /// ValueError when a schedule decides the rate.
  void set_learning_rate(double learning_rate) { optimizer_->set_learning_rate(learning_rate); }
  Optimizer& optimizer() const { return *optimizer_; }
  /// The trained parameters, by name, in update-index order.
  const std::vector<std::pair<std::string, nn::ParameterPtr>>& params() const { return params_; }

  /// Writes the optimizer's state (arrays named "<param>.<state>", e.g. "0.weight.mom"), the
  /// update counts and the learning rate to `path` in the safetensors format (a blocker).
  /// When the store applies the optimizer and keeps its state elsewhere (parameter servers:
  /// KVStore::keeps_optimizer_state_elsewhere), the state and counts are gathered from there.
  void save_states(const std::string& path) const;
  /// Restores what save_states wrote, so that training continues bit for bit. The file must
  /// come from the same kind of optimizer (ValueError naming both); a state for a parameter
  /// this trainer does not have, or of another shape, is a ValueError/ShapeError naming it;
  /// malformed files are FormatErrors, missing ones IOErrors. Parameters without a state in
  /// the file start afresh. With the optimizer on a store that keeps its state elsewhere, the
  /// state goes there too (now, or once the store is set up at the first step).
  void load_states(const std::string& path);

 private:
  // Checks every trained parameter, then sets up the store if that has not happened yet.
  void prepare(std::string_view what);
  // Creates the store (when one is needed) and its keys, and pulls rank 0's values across
  // processes. Once, when every trained value exists; the buckets follow at the first step.
  void setup_store();
  bool uses_store() const;
  // The gradient buckets, made at the first use (every trained value known by then).
  const GradientBuckets& buckets();
  // The update of trained parameter i (its multipliers set first): by the optimizer, or
  // through the store with update_on_kvstore. `grads`: its gradient replicas (list_grad()).
  void update_one(size_t i);
  void update_one(size_t i, std::span<const NDArray> grads);
  // The optimizer's state on the store, when the store keeps it elsewhere.
  bool state_on_store() const;
  // Hands the optimizer's state of every trained parameter to the store (after load_states).
  void push_states_to_store();

  std::vector<std::pair<std::string, nn::ParameterPtr>> params_;
  OptimizerPtr optimizer_;
  double scale_;
  kvstore::KVStorePtr kvstore_;
  bool update_on_kvstore_;
  bool store_ready_ = false;
  bool states_for_store_ = false;  // load_states ran before the store was set up
  size_t bucket_bytes_ = kDefaultBucketBytes;
  std::shared_ptr<const GradientBuckets> buckets_;  // made with the store's keys
};

}  // namespace janus::optim
