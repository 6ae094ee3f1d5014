// Gradient buckets: the trained parameters grouped, in reverse order (the order backward
// produces their gradients), into buckets of about `bucket_bytes`, each reduced through the
// KVStore as one flat array per device (what PyTorch DDP's buckets and Horovod's tensor fusion
// do): many small gradients cost one ring instead of one each. Private to src/optim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "janus/nn/parameter.h"
#include "janus/optim/kvstore.h"

namespace janus::optim {

class GradientBuckets {
 public:
  /// Groups `params` (the trainer's, by index; null for those not trained): consecutive ones,
  /// from the last, with one dtype and one list of devices, until a bucket holds at least
  /// `bucket_bytes`. Bucket b is key `first_key + b` of `kv` (initialised here) when it holds
  /// several parameters; a bucket of one parameter uses that parameter's own key (its index).
  GradientBuckets(const std::vector<nn::ParameterPtr>& params, size_t bucket_bytes,
                  kvstore::KVStore& kv, int first_key);

  /// What follows a bucket's reduction instead of copying the sums back (allreduce's `then`):
  /// the bucket's parameter indices, its flat arrays (one per device, holding the sums; empty
  /// when the gradients already hold them: a bucket of one parameter, or a device whose copies
  /// are copy_into operations) with each parameter's offset there, and the bucket's priority.
  /// With `unsummed`, the flats hold each device's own gradients and the store has not summed
  /// them (see allreduce): `then` must, on every device, from the flats in device order.
  /// `replicas[j]` are the gradient replicas of the bucket's parameter j (device order), as
  /// allreduce read them once for the step, so that `then` need not read them again.
  using Then = std::function<void(const std::vector<size_t>& params, std::span<const NDArray> flats,
                                  std::span<const int64_t> offsets, int priority, bool unsummed,
                                  std::span<const std::vector<NDArray>> replicas)>;

  /// Sums every gradient over its replicas, into every replica: per bucket, the gradients are
  /// copied into a flat array per device, reduced in place through `kv`, and copied back (or,
  /// given `then`, handed to it instead of copied back). All pushed, in bucket order (the last
  /// layers' first), with priority -(first index) so that the gradients a forward pass needs
  /// first win when several reductions are ready. Given `then`, a bucket on two devices of
  /// host memory (float32 or float64) whose store only sums (KVStore::sums_on_the_devices) is
  /// not reduced through the store: `then` gets the packed flats unsummed and sums them in its
  /// own operation on each device. Each device then waits for the other once per step (for its
  /// packed gradients) instead of twice (the ring's two steps), and two operations per device
  /// go; the sum is the ring's bit for bit (one addition of two numbers, which commutes).
  void allreduce(const std::vector<nn::ParameterPtr>& params, kvstore::KVStore& kv,
                 const Then& then = nullptr) const;

  /// The parameter indices of each bucket, for tests.
  std::vector<std::vector<size_t>> layout() const;

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices, in the order backward produces them
    std::vector<int64_t> offsets;
    int key = 0;
    std::vector<NDArray> flats;  // one per device, when the bucket holds several parameters
  };
  std::vector<Bucket> buckets_;
};

}  // namespace janus::optim
