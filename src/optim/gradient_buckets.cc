// Gradient buckets: grouping and the bucketed allreduce.
#include "gradient_buckets.h"

#include <algorithm>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
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

void GradientBuckets::allreduce(const std::vector<nn::ParameterPtr>& params,
                                kvstore::KVStore& kv) const {
  autograd::PauseScope pause;
  for (const Bucket& bucket : buckets_) {
    const int priority =
        -static_cast<int>(*std::min_element(bucket.params.begin(), bucket.params.end()));
    if (bucket.flats.empty()) {
      const std::vector<NDArray> grads = params[bucket.params[0]]->list_grad();
      kv.pushpull(bucket.key, grads, grads, priority);
      continue;
    }
    const ops::ScopedPriority scope(priority);
    // A view of parameter j's slot in the flat array of device d, and its gradient flattened.
    auto slot = [&](size_t d, size_t j) {
      const nn::Parameter& p = *params[bucket.params[j]];
      return bucket.flats[d].slice(bucket.offsets[j], bucket.offsets[j] + p.data().size());
    };
    auto flat_grad = [&](size_t d, size_t j) {
      const NDArray g = params[bucket.params[j]]->list_grad()[d];
      return g.reshape(Shape{g.size()});
    };
    for (size_t d = 0; d < bucket.flats.size(); ++d) {
      for (size_t j = 0; j < bucket.params.size(); ++j) copy_into(slot(d, j), flat_grad(d, j));
    }
    kv.pushpull(bucket.key, bucket.flats, bucket.flats, priority);
    for (size_t d = 0; d < bucket.flats.size(); ++d) {
      for (size_t j = 0; j < bucket.params.size(); ++j) copy_into(flat_grad(d, j), slot(d, j));
    }
  }
}

std::vector<std::vector<size_t>> GradientBuckets::layout() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

}  // namespace janus::optim
