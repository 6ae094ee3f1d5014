// Trainer: one optimizer update per trainable parameter after backward, and the optimizer's
// state in a safetensors file.
#include "janus/optim/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/nn/serialization.h"
#include "janus/ops/ops.h"

#include "fused_updates.h"
#include "gradient_buckets.h"

namespace janus::optim {
namespace {

constexpr std::string_view kContentKey = "janus.content";
constexpr std::string_view kContent = "optimizer_states";
constexpr std::string_view kCountPrefix = "update_count.";

bool is_trained(const nn::Parameter& p) { return p.grad_req() != autograd::GradReq::kNull; }

// Per trainer index: the parameter when it is trained, else null.
std::vector<nn::ParameterPtr> trained_or_null(
    const std::vector<std::pair<std::string, nn::ParameterPtr>>& params) {
  std::vector<nn::ParameterPtr> out;
  for (const auto& [name, p] : params) out.push_back(is_trained(*p) ? p : nullptr);
  return out;
}

// The parameter has a value and a gradient buffer that backward can have written.
void check_has_gradient(const std::string& name, const nn::Parameter& p) {
  if (!p.initialized()) {
    JANUS_CHECK(!p.deferred(), ValueError,
                "Trainer: step: parameter '{}' ({}) has no gradient: its shape {} is not known "
                "yet (0: unknown), so no forward and backward pass has run through it; run one "
                "before step()",
                name, p.name(), p.shape());
    JANUS_THROW(ValueError,
                "Trainer: step: parameter '{}' ({}) has no gradient: it has not been "
                "initialised; call initialize() on the block first",
                name, p.name());
  }
  try {
    p.grad();
  } catch (Error& e) {
    e.add_context(fmt::format("Trainer: step: parameter '{}' has no gradient", name));
    throw;
  }
}

int64_t parse_count(const std::string& path, const std::string& key, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  JANUS_CHECK(!text.empty() && *end == '\0' && errno == 0 && v >= 0, FormatError,
              "load_states: '{}': metadata {} is '{}', expected a non-negative integer", path, key,
              text);
  return v;
}

double parse_rate(const std::string& path, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  JANUS_CHECK(!text.empty() && *end == '\0' && v >= 0, FormatError,
              "load_states: '{}': metadata learning_rate is '{}', expected a number >= 0", path,
              text);
  return v;
}

// Reads a states file against a trainer's parameters and optimizer. Every check happens here,
// before load_states changes the optimizer, so a bad file leaves it as it was.
struct StatesReader {
  const std::string& path;
  const std::vector<std::pair<std::string, nn::ParameterPtr>>& params;
  const Optimizer& optimizer;

  void check_content(const nn::Metadata& meta) const {
    auto content = meta.find(std::string(kContentKey));
    JANUS_CHECK(content != meta.end() && content->second == kContent, FormatError,
                "load_states: '{}' holds no optimizer states (its metadata lacks {} = {}; "
                "parameters load with nn::load_parameters)",
                path, kContentKey, kContent);
    const std::string saved_by = meta.contains("optimizer") ? meta.at("optimizer") : "?";
    JANUS_CHECK(saved_by == optimizer.name(), ValueError,
                "load_states: '{}' holds states of optimizer '{}', but this trainer uses '{}'",
                path, saved_by, optimizer.name());
  }

  // The position of the trainer's parameter `param`, of which the file holds `what`.
  size_t param_index(const std::string& param, const std::string& what) const {
    size_t i = 0;
    while (i < params.size() && params[i].first != param) ++i;
    JANUS_CHECK(i < params.size(), ValueError,
                "load_states: '{}' holds {} for parameter '{}', which this trainer does not "
                "have; its parameters are {}",
                path, what, param, fmt::join(parameter_names(), ", "));
    return i;
  }

  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (const auto& [n, p] : params) names.push_back(n);
    return names;
  }

  // Update counts by parameter: every parameter with a state must have one.
  std::map<size_t, int64_t> read_counts(const nn::Metadata& meta) const {
    std::map<size_t, int64_t> counts;
    for (const auto& [key, value] : meta) {
      if (!key.starts_with(kCountPrefix)) continue;
      const std::string param = key.substr(kCountPrefix.size());
      counts[param_index(param, "an update count")] = parse_count(path, key, value);
    }
    return counts;
  }

  // States by parameter, each complete, of its parameter's shape, dtype and device.
  std::map<size_t, std::vector<NDArray>> read_states(
      const nn::NamedArrays& arrays, const std::map<size_t, int64_t>& counts) const {
    const std::vector<std::string> state_names = optimizer.state_names();
    std::map<size_t, std::vector<NDArray>> states;
    for (const auto& [full, value] : arrays) {
      const size_t dot = full.rfind('.');
      const std::string state = dot == std::string::npos ? "" : full.substr(dot + 1);
      auto k = std::find(state_names.begin(), state_names.end(), state);
      JANUS_CHECK(k != state_names.end(), ValueError,
                  "load_states: '{}': array '{}' is not a state of {} (expected "
                  "<parameter>.<{}>)",
                  path, full, optimizer.describe(), fmt::join(state_names, "|"));
      const std::string param = full.substr(0, dot);
      const size_t index = param_index(param, fmt::format("state '{}'", state));
      JANUS_CHECK(counts.contains(index), FormatError,
                  "load_states: '{}': parameter '{}' has states but no {}{} in the metadata", path,
                  param, kCountPrefix, param);
      std::vector<NDArray>& slot = states[index];
      slot.resize(state_names.size());
      slot[static_cast<size_t>(k - state_names.begin())] =
          on_parameter(*params[index].second, param, full, value);
    }
    for (const auto& [index, slot] : states) {
      for (size_t k = 0; k < slot.size(); ++k) {
        JANUS_CHECK(slot[k].defined(), FormatError,
                    "load_states: '{}': parameter '{}' has no state '{}' (expected {})", path,
                    params[index].first, state_names[k], fmt::join(state_names, ", "));
      }
    }
    return states;
  }

  // A state value checked against its parameter's shape, in its dtype and on its device.
  NDArray on_parameter(const nn::Parameter& p, const std::string& param, const std::string& full,
                       const NDArray& value) const {
    JANUS_CHECK(!p.shape_known() || value.shape() == p.shape(), ShapeError,
                "load_states: '{}': state '{}' has shape {}, but parameter '{}' has shape {}", path,
                full, value.shape(), param, p.shape());
    NDArray v = value.dtype() == p.dtype() ? value : cast(value, p.dtype());
    const Device device = p.initialized() ? p.data().device() : p.device();
    return v.device() == device ? v : copyto(v, device);
  }

  // The optimizer's update count: the file's, or at least every parameter's.
  int64_t read_num_update(const nn::Metadata& meta, const std::map<size_t, int64_t>& counts) const {
    int64_t num_update = 0;
    for (const auto& [index, count] : counts) num_update = std::max(num_update, count);
    if (meta.contains("num_update")) {
      num_update = std::max(num_update, parse_count(path, "num_update", meta.at("num_update")));
    }
    return num_update;
  }
};

}  // namespace

Trainer::Trainer(const nn::ParameterDict& params, OptimizerPtr optimizer,
                 kvstore::KVStorePtr kvstore, bool update_on_kvstore)
    : optimizer_(std::move(optimizer)),
      kvstore_(std::move(kvstore)),
      update_on_kvstore_(update_on_kvstore) {
  JANUS_CHECK(optimizer_ != nullptr, ValueError, "Trainer: the optimizer is null");
  std::set<const nn::Parameter*> seen;
  for (const auto& [name, p] : params) {
    if (seen.insert(p.get()).second) params_.emplace_back(name, p);
  }
  scale_ = optimizer_->rescale_grad();
  // With every value known, the store starts now: across processes every worker then takes
  // rank 0's values before its first forward pass. Deferred shapes wait for the first step.
  bool known = true;
  for (const auto& [name, p] : params_) known = known && (!is_trained(*p) || p->initialized());
  if (known) setup_store();
}

void Trainer::prepare(std::string_view what) {
  // Every check before any update, so that an error leaves every weight as it was.
  for (const auto& [name, p] : params_) {
    if (!is_trained(*p)) continue;
    try {
      check_has_gradient(name, *p);
    } catch (Error& e) {
      if (what != "step") e.add_context(fmt::format("Trainer: {}", what));
      throw;
    }
  }
  if (!store_ready_) setup_store();
}

void Trainer::setup_store() {
  bool replicated = false;
  for (const auto& [name, p] : params_) replicated = replicated || p->devices().size() > 1;
  if (!kvstore_ && (replicated || update_on_kvstore_)) kvstore_ = kvstore::create("device");
  if (kvstore_) {
    // Parameter i is key i: the optimizer's index on the store, too.
    for (size_t i = 0; i < params_.size(); ++i) {
      const nn::Parameter& p = *params_[i].second;
      if (!is_trained(p)) continue;
      kvstore_->init(static_cast<int>(i), p.data());
      // Across processes the store holds rank 0's value: every worker starts from it (MXNet's
      // Trainer pulls after init too).
      if (kvstore_->num_workers() > 1) kvstore_->pull(static_cast<int>(i), p.list_data());
    }
    if (update_on_kvstore_) kvstore_->set_optimizer(optimizer_);
  }
  store_ready_ = true;
  if (states_for_store_) push_states_to_store();
}

bool Trainer::state_on_store() const {
  return update_on_kvstore_ && kvstore_ && kvstore_->keeps_optimizer_state_elsewhere();
}

void Trainer::push_states_to_store() {
  states_for_store_ = false;
  if (!state_on_store()) return;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!is_trained(*params_[i].second)) continue;
    const int index = static_cast<int>(i);
    kvstore_->push_optimizer_state(index,
                                   {optimizer_->state(index), optimizer_->update_count(index)});
  }
}

bool Trainer::uses_store() const {
  if (!kvstore_) return false;
  if (update_on_kvstore_ || kvstore_->num_workers() > 1) return true;
  for (const auto& [name, p] : params_) {
    if (p->devices().size() > 1) return true;
  }
  return false;
}

void Trainer::step(int64_t batch_size) {
  JANUS_CHECK(batch_size > 0, ValueError,
              "Trainer: step: batch_size is {}, expected a positive number", batch_size);
  prepare("step");
  if (!uses_store() || update_on_kvstore_) {
    update(batch_size);
    return;
  }
  // Replicas updated by their devices: after each bucket's reduction, one operation per device
  // copies the sums into the gradients and updates the bucket's parameters there (what
  // allreduce_grads() then update() do with one operation per copy-back and per parameter).
  // Where the buckets leave the sum to us (two devices of one host), that operation sums the
  // devices' packed gradients into its gradients itself.
  optimizer_->set_rescale_grad(scale_ / static_cast<double>(batch_size));
  buckets().allreduce(trained_or_null(params_), *kvstore_,
                      [&](const std::vector<size_t>& bucket, std::span<const NDArray> flats,
                          std::span<const int64_t> offsets, int priority, bool unsummed,
                          std::span<const std::vector<NDArray>> replicas) {
                        FusedUpdates fused(priority);
                        for (size_t d = 0; d < flats.size(); ++d) {
                          std::vector<NDArray> grads;
                          grads.reserve(replicas.size());
                          for (const std::vector<NDArray>& r : replicas) grads.push_back(r[d]);
                          std::vector<int64_t> at(offsets.begin(), offsets.end());
                          if (unsummed) {
                            fused.sum_first(std::vector<NDArray>(flats.begin(), flats.end()),
                                            std::move(grads), std::move(at));
                          } else {
                            fused.scatter_first(flats[d], std::move(grads), std::move(at));
                          }
                        }
                        for (size_t j = 0; j < bucket.size(); ++j)
                          update_one(bucket[j], replicas[j]);
                        fused.push();
                      });
}

const GradientBuckets& Trainer::buckets() {
  if (buckets_ == nullptr) {
    buckets_ = std::make_shared<GradientBuckets>(trained_or_null(params_), bucket_bytes_, *kvstore_,
                                                 static_cast<int>(params_.size()));
  }
  return *buckets_;
}

void Trainer::allreduce_grads() {
  prepare("allreduce_grads");
  if (!uses_store() || update_on_kvstore_) return;
  buckets().allreduce(trained_or_null(params_), *kvstore_);
}

void Trainer::set_bucket_bytes(size_t bytes) {
  JANUS_CHECK(buckets_ == nullptr, ValueError,
              "Trainer: set_bucket_bytes: the buckets are fixed at the first step; set it before");
  bucket_bytes_ = bytes;
}

std::vector<std::vector<size_t>> Trainer::bucket_layout() const {
  return buckets_ ? buckets_->layout() : std::vector<std::vector<size_t>>{};
}

void Trainer::update(int64_t batch_size) {
  JANUS_CHECK(batch_size > 0, ValueError,
              "Trainer: update: batch_size is {}, expected a positive number", batch_size);
  prepare("update");
  optimizer_->set_rescale_grad(scale_ / static_cast<double>(batch_size));
  if (uses_store() && update_on_kvstore_) {  // the store updates: a push and a pull each
    for (size_t i = 0; i < params_.size(); ++i) {
      if (is_trained(*params_[i].second)) update_one(i);
    }
    return;
  }
  // Every parameter's update (its kernels run in the order of the parameters, as before) in
  // one engine operation per device: a step costs one push, one wake-up of the device's worker
  // and one dependency check instead of one per parameter. It reads every gradient, so it
  // starts after the last of them is written; on one device the worker runs backward's
  // operations one at a time anyway, so the updates had nothing to overlap with.
  FusedUpdates fused(/*priority=*/0);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (is_trained(*params_[i].second)) update_one(i);
  }
  fused.push();
}

void Trainer::update_one(size_t i) { update_one(i, params_[i].second->list_grad()); }

void Trainer::update_one(size_t i, std::span<const NDArray> grads) {
  const nn::Parameter& p = *params_[i].second;
  const int index = static_cast<int>(i);
  JANUS_CHECK(!state_on_store() || (p.lr_mult() == 1 && p.wd_mult() == 1), NotImplementedError,
              "Trainer: parameter '{}' has lr_mult {} and wd_mult {}, but the optimizer runs "
              "on the parameter servers, which apply one learning rate and weight decay to "
              "every key; use update_on_kvstore=false",
              params_[i].first, p.lr_mult(), p.wd_mult());
  optimizer_->set_mults(index, p.lr_mult(), p.wd_mult());
  if (uses_store() && update_on_kvstore_) {
    kvstore_->push(index, grads, -index);
    kvstore_->pull(index, p.list_data(), -index);
  } else {
    optimizer_->update(index, p.list_data(), grads);
  }
}

void Trainer::save_states(const std::string& path) const {
  const bool on_store = state_on_store();
  const std::vector<std::string> state_names = optimizer_->state_names();
  nn::NamedArrays arrays;
  nn::Metadata meta{{std::string(kContentKey), std::string(kContent)},
                    {"optimizer", std::string(optimizer_->name())},
                    {"describe", optimizer_->describe()},
                    {"num_update", std::to_string(optimizer_->num_update())},
                    {"learning_rate", fmt::format("{}", optimizer_->learning_rate())}};
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string& name = params_[i].first;
    const int index = static_cast<int>(i);
    // On the store: its state and count (in dist_sync the count is the worker's own too).
    kvstore::KVStore::OptimizerState stored;
    if (on_store && is_trained(*params_[i].second)) stored = kvstore_->pull_optimizer_state(index);
    const int64_t count = on_store ? stored.update_count : optimizer_->update_count(index);
    if (count == 0) continue;
    meta.emplace(fmt::format("{}{}", kCountPrefix, name), std::to_string(count));
    const std::vector<NDArray>& state = on_store ? stored.arrays : optimizer_->state(index);
    for (size_t k = 0; k < state.size(); ++k) {
      arrays.emplace_back(fmt::format("{}.{}", name, state_names[k]), state[k]);
    }
  }
  nn::save_safetensors(path, arrays, meta);
}

void Trainer::load_states(const std::string& path) {
  nn::Metadata meta;
  const nn::NamedArrays arrays = nn::load_safetensors(path, &meta);
  const StatesReader r{path, params_, *optimizer_};
  r.check_content(meta);
  const std::map<size_t, int64_t> counts = r.read_counts(meta);
  const std::map<size_t, std::vector<NDArray>> states = r.read_states(arrays, counts);
  const int64_t num_update = r.read_num_update(meta, counts);
  const bool restore_rate = !optimizer_->lr_scheduler() && meta.contains("learning_rate");
  const double rate = restore_rate ? parse_rate(path, meta.at("learning_rate")) : 0.0;

  // Everything checked: replace the optimizer's state.
  optimizer_->reset();
  for (const auto& [index, count] : counts) {
    auto it = states.find(index);
    optimizer_->set_state(static_cast<int>(index),
                          it == states.end() ? std::vector<NDArray>{} : it->second, count);
  }
  optimizer_->set_num_update(num_update);
  if (restore_rate) optimizer_->set_learning_rate(rate);
  if (update_on_kvstore_) {
    states_for_store_ = true;
    if (store_ready_) push_states_to_store();
  }
}

}  // namespace janus::optim
