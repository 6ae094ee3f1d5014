// max_pool2d_relu_backward(x, dy): the gradient of relu then max pooling, and of the bias of the
// convolution before them, from the pooled gradient dy: dx = relu_backward(x,
// max_pool2d_backward(x, dy)) with x relu's output (the pooling's input), and dbias =
// conv2d_backward_bias(dx), in one pass over x and dx (each plane summed while it is in cache).
// Built by the graph pass fuse_max_pool_relu_backward; it gives the bits of the three calls.
#include <vector>

#include "janus/ops/ops.h"

#include "../nn/pool.h"
#include "../op_utils.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "max_pool2d_relu_backward";

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const PoolGeom g = check_max_pool_backward(kName, args);
  return {x, TensorSpec{Shape{g.c}, x.dtype, x.device}};
}

// Each channel's planes, sample by sample, summed in double and rounded once: the order of
// conv2d_backward_bias, so the same bits.
template <typename T>
void channel_sums(const std::vector<double>& plane_sums, int64_t n, int64_t c, T* db) {
  for (int64_t ch = 0; ch < c; ++ch) {
    double total = 0;
    for (int64_t s = 0; s < n; ++s) total += plane_sums[static_cast<size_t>(s * c + ch)];
    db[ch] = static_cast<T>(total);
  }
}

void kernel(const KernelArgs& args) {
  const PoolGeom g = pool_geometry(kName, args.in(0).shape(), PoolAttrs::from(args.attrs));
  std::vector<double> plane_sums(static_cast<size_t>(g.n * g.c));
  max_pool_relu_backward(g, args.in(0), args.in(1), args.out(0), plane_sums.data(), args.ctx);
  if (args.out(1).dtype() == DType::kFloat64) {
    channel_sums(plane_sums, g.n, g.c, args.out(1).data<double>());
  } else {
    channel_sums(plane_sums, g.n, g.c, args.out(1).data<float>());
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "max_pool2d_relu_backward",
    .doc = "The gradients of a convolution's relu and bias through the max pooling that reads "
           "it, from the pooled gradient dy: dx = relu_backward(x, max_pool2d_backward(x, dy)) "
           "(each window's dy to the first position of its maximum in x, kept where x > 0 or x "
           "is NaN), and dbias = dx summed over the batch and the spatial axes (in float64, "
           "rounded once: conv2d_backward_bias's bits), in one pass. Built by the graph pass "
           "fuse_max_pool_relu_backward.",
    .inputs = {"x", "dy"},
    .outputs = {"dx", "dbias"},
    .attrs = pool_attrs(),
    .attr_fields = attr_fields<PoolAttrs>(),
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    .not_differentiable = true,  // built by a pass after gradients
});

}  // namespace janus::ops
