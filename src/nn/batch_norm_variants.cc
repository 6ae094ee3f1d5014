// BatchNormReLU: BatchNorm with a relu after it.
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

BatchNormReLU::BatchNormReLU(int64_t axis, double momentum, double epsilon, bool center, bool scale,
                             int64_t in_channels, bool use_global_stats)
    : BatchNorm(axis, momentum, epsilon, center, scale, in_channels, use_global_stats) {}

NDArray BatchNormReLU::forward(const NDArray& x) { return relu(BatchNorm::forward(x)); }

std::string BatchNormReLU::describe() const { return BatchNorm::describe() + " + relu"; }

}  // namespace janus::nn
