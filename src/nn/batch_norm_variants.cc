// BatchNormReLU and SyncBatchNorm: BatchNorm with a relu after it, and BatchNorm on one device.
#include <fmt/format.h>
#include <fmt/ranges.h>

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
  JANUS_CHECK(num_devices == 1, NotImplementedError,
              "SyncBatchNorm: num_devices is {}, but Janus does not synchronise batch statistics "
              "across devices; it is BatchNorm on one device (num_devices=1)",
              num_devices);
}

NDArray SyncBatchNorm::forward(const NDArray& x) {
  const std::vector<Device>& devices = running_mean()->devices();
  JANUS_CHECK(devices.size() == 1, NotImplementedError,
              "{}: its parameters are on {} devices ({}), but Janus does not synchronise batch "
              "statistics across devices; each device would normalise its slice of the batch by "
              "its own statistics, so SyncBatchNorm runs on one device only",
              name(), devices.size(), fmt::join(devices, ", "));
  return BatchNorm::forward(x);
}

std::string SyncBatchNorm::describe() const { return "Sync" + BatchNorm::describe(); }

}  // namespace janus::nn
