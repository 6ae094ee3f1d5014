// max_pool2d_backward(x, dy): the gradient of max_pool2d with respect to its input.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "pool.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "max_pool2d_backward";

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  check_max_pool_backward(kName, args);
  return {x};
}

void kernel(const KernelArgs& args) {
  max_pool_backward(pool_geometry(kName, args.in(0).shape(), PoolAttrs::from(args.attrs)),
                    args.in(0), args.in(1), args.out(0), args.ctx);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "max_pool2d_backward",
    .doc = "The input gradient of max_pool2d: each window's dy goes to the first position of its "
           "maximum in x.",
    .inputs = {"x", "dy"},
    .outputs = {"dx"},
    .attrs = pool_attrs(),
    .attr_fields = attr_fields<PoolAttrs>(),
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    // A second derivative of max pooling would route through the same argmax; not needed by
    // any model here, so it is not provided.
    .not_differentiable = true,
});

}  // namespace janus::ops

namespace janus {
NDArray max_pool2d_backward(const NDArray& x, const NDArray& dy, std::vector<int64_t> kernel_size,
                            std::vector<int64_t> stride, std::vector<int64_t> padding,
                            bool ceil_mode) {
  static const ops::OpDef& op = ops::get_op("max_pool2d_backward");
  return ops::invoke(op, {x, dy},
                     {std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode})[0];
}
}  // namespace janus
