// Gradient buckets: grouping and the bucketed allreduce.
#include "gradient_buckets.h"

#include <algorithm>
#include <cstring>

#include "janus/autograd/autograd.h"
#include "janus/core/device.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"

namespace janus::optim {

GradientBuckets::GradientBuckets(const std::vector<nn::ParameterPtr>& params, size_t bucket_bytes,
                                 kvstore::KVStore& kv, int first_key) {
  Bucket current;
  size_t bytes = 0;
  const nn::Parameter* last = nullptr;
  auto close = [&] {
    if (!current.params.empty()) buckets_.push_back(std::move(current));
    current = Bucket();
    bytes = 0;
  };
  for (size_t k = params.size(); k-- > 0;) {
    const nn::Parameter* p = params[k].get();
    if (p == nullptr) continue;
    if (last != nullptr && (p->dtype() != last->dtype() || p->devices() != last->devices())) {
      close();
    }
    current.params.push_back(k);
    bytes += p->data().nbytes();
    last = p;
    if (bytes >= bucket_bytes) close();
  }
  close();
  autograd::PauseScope pause;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    if (bucket.params.size() == 1) {
      bucket.key = static_cast<int>(bucket.params[0]);
      continue;
    }
    bucket.key = first_key + static_cast<int>(b);
    int64_t size = 0;
    for (size_t i : bucket.params) {
      bucket.offsets.push_back(size);
      size += params[i]->data().size();
    }
    const nn::Parameter& first = *params[bucket.params[0]];
    for (Device d : first.devices()) bucket.flats.push_back(zeros({size}, first.dtype(), d));
    kv.init(bucket.key, bucket.flats[0]);
  }
}

namespace {

// Copies between one device's gradients of a bucket and its flat array there (`into_flat`: the
// gradients into their slots, else back), as one engine operation on the compute lane of that
// device. One operation, not one per gradient: a LeNet step on two devices pushed 40 copies
// of a few hundred bytes to a few hundred KB each. The compute lane, not the copy lane: the
// gather runs right after backward's gradient writes on the same worker and the scatter right
// before the optimizer's updates there, so the step never hops to the copy worker and back,
// each hop a wake-up that, with every core owned by a device's compute worker, waits for a core.
// There is nothing to overlap: the reduction needs the gather, the updates need the scatter.
void push_bucket_copy(const NDArray& flat, std::vector<NDArray> grads,
                      const std::vector<int64_t>& offsets, bool into_flat, int priority) {
  std::vector<Var*> grad_vars;
  for (const NDArray& g : grads) grad_vars.push_back(g.var());
  Var* flat_var[] = {flat.var()};
  const std::span<Var* const> reads = into_flat ? std::span<Var* const>(grad_vars) : flat_var;
  const std::span<Var* const> writes = into_flat ? std::span<Var* const>(flat_var) : grad_vars;
  OpDetail detail;
  if (op_listener_installed()) detail.bytes = static_cast<int64_t>(2 * flat.nbytes());
  engine().push(
      [flat, grads = std::move(grads), offsets, into_flat](const RunContext&) {
        char* base = static_cast<char*>(flat.raw_data());
        const size_t item = dtype_size(flat.dtype());
        for (size_t j = 0; j < grads.size(); ++j) {
          char* slot = base + static_cast<size_t>(offsets[j]) * item;
          if (grads[j].nbytes() == 0) continue;
          if (into_flat) {
            std::memcpy(slot, grads[j].raw_data(), grads[j].nbytes());
          } else {
            std::memcpy(grads[j].raw_data(), slot, grads[j].nbytes());
          }
        }
      },
      reads, writes, flat.device(), Lane::kCompute, priority,
      into_flat ? "bucket_gather" : "bucket_scatter", std::move(detail));
}

// The same, on any device: one copy_into per gradient (a device whose memory is not the host's
// has its copies in its copy_into kernel, which a plain memcpy cannot replace).
void copy_bucket(const NDArray& flat, std::vector<NDArray> grads,
                 const std::vector<int64_t>& offsets, bool into_flat, int priority) {
  if (flat.device().is_cpu()) {
    push_bucket_copy(flat, std::move(grads), offsets, into_flat, priority);
    return;
  }
  const ops::ScopedPriority scope(priority);
  for (size_t j = 0; j < grads.size(); ++j) {
    const NDArray slot = flat.slice(offsets[j], offsets[j] + grads[j].size());
    const NDArray g = grads[j].reshape(Shape{grads[j].size()});
    if (into_flat) {
      copy_into(slot, g);
    } else {
      copy_into(g, slot);
    }
  }
}

// Two flats that the devices can sum themselves (allreduce): host memory each reads in place,
// a dtype whose sum FusedUpdates computes, and a store that would only sum them.
bool sum_on_the_devices(std::span<const NDArray> flats, const kvstore::KVStore& kv) {
  return flats.size() == 2 && kv.sums_on_the_devices() && flats[0].device().is_cpu() &&
         flats[1].device().is_cpu() && peer_access(flats[0].device(), flats[1].device()) &&
         peer_access(flats[1].device(), flats[0].device()) &&
         (flats[0].dtype() == DType::kFloat32 || flats[0].dtype() == DType::kFloat64);
}

}  // namespace

void GradientBuckets::allreduce(const std::vector<nn::ParameterPtr>& params, kvstore::KVStore& kv,
                                const Then& then) const {
  autograd::PauseScope pause;
  for (const Bucket& bucket : buckets_) {
    const int priority =
        -static_cast<int>(*std::min_element(bucket.params.begin(), bucket.params.end()));
    // replicas[j]: the gradient replicas of the bucket's parameter j, read once per step.
    std::vector<std::vector<NDArray>> replicas;
    replicas.reserve(bucket.params.size());
    for (size_t i : bucket.params) replicas.push_back(params[i]->list_grad());
    if (bucket.flats.empty()) {
      kv.pushpull(bucket.key, replicas[0], replicas[0], priority);
      if (then) then(bucket.params, {}, {}, priority, false, replicas);
      continue;
    }
    // grads[d][j]: parameter j's gradient on device d.
    std::vector<std::vector<NDArray>> grads(bucket.flats.size());
    for (std::vector<NDArray>& g : grads) g.reserve(replicas.size());
    for (const std::vector<NDArray>& r : replicas) {
      for (size_t d = 0; d < bucket.flats.size(); ++d) grads[d].push_back(r[d]);
    }
    for (size_t d = 0; d < bucket.flats.size(); ++d) {
      copy_bucket(bucket.flats[d], grads[d], bucket.offsets, /*into_flat=*/true, priority);
    }
    if (then && sum_on_the_devices(bucket.flats, kv)) {
      then(bucket.params, bucket.flats, bucket.offsets, priority, true, replicas);
      continue;
    }
    kv.pushpull(bucket.key, bucket.flats, bucket.flats, priority);
    if (then && bucket.flats[0].device().is_cpu()) {
      then(bucket.params, bucket.flats, bucket.offsets, priority, false, replicas);
      continue;
    }
    for (size_t d = 0; d < bucket.flats.size(); ++d) {
      copy_bucket(bucket.flats[d], std::move(grads[d]), bucket.offsets, /*into_flat=*/false,
                  priority);
    }
    if (then) then(bucket.params, {}, {}, priority, false, replicas);
  }
}

std::vector<std::vector<size_t>> GradientBuckets::layout() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

}  // namespace janus::optim
