// BatchNormReLU and SyncBatchNorm: BatchNorm with a relu after it, and BatchNorm that trains on
// one device.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

BatchNormReLU::BatchNormReLU(int64_t axis, double momentum, double epsilon, bool center, bool scale,
                             int64_t in_channels, bool use_global_stats)
    : BatchNorm(axis, momentum, epsilon, center, scale, in_channels, use_global_stats) {}

NDArray BatchNormReLU::forward(const NDArray& x) { return relu(BatchNorm::forward(x)); }

std::string BatchNormReLU::describe() const { return BatchNorm::describe() + " + relu"; }

SyncBatchNorm::SyncBatchNorm(int64_t in_channels, int64_t num_devices, double momentum,
                             double epsilon, bool center, bool scale, bool use_global_stats)
    : BatchNorm(1, momentum, epsilon, center, scale, in_channels, use_global_stats) {
  JANUS_CHECK(num_devices >= 1, ValueError,
              "SyncBatchNorm: num_devices is {}, expected a positive number", num_devices);
}

NDArray SyncBatchNorm::forward(const NDArray& x) {
  const std::vector<Device>& devices = running_mean()->devices();
  // Only batch statistics would need the other devices' slices of the batch.
  JANUS_CHECK(!autograd::is_training() || use_global_stats() || devices.size() <= 1,
              NotImplementedError,
              "{}: its parameters are on {} devices ({}), but Janus does not synchronise batch "
              "statistics across devices; training would normalise each device's slice of the "
              "batch by its own statistics, so SyncBatchNorm trains on one device only "
              "(inference and use_global_stats=True, which use the running statistics, work on "
              "any number)",
              name(), devices.size(), fmt::join(devices, ", "));
  return BatchNorm::forward(x);
}

std::string SyncBatchNorm::describe() const { return "Sync" + BatchNorm::describe(); }

}  // namespace janus::nn
