// max_pool2d(x): the maximum of each window of x [N, C, H, W].
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "pool.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_max_pool2d(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const PoolGeom g = pool_geometry("max_pool2d", x.shape, PoolAttrs::from(args.attrs));
  check_pool_dtype("max_pool2d", x.dtype);
  return {TensorSpec{Shape{g.n, g.c, g.oh, g.ow}, x.dtype, x.device}};
}

void max_pool2d_cpu(const KernelArgs& args) {
  max_pool_forward(pool_geometry("max_pool2d", args.in(0).shape(), PoolAttrs::from(args.attrs)),
                   args.in(0), args.out(0), args.ctx);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "max_pool2d",
    .doc =
        "The maximum over each kernel_size window of x [N, C, H, W], moved by stride: "
        "y [N, C, OH, OW] with OH = (H + 2 * padding - KH) / stride + 1, the division rounded up "
        "in ceil_mode.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = pool_attrs(),
    .attr_fields = attr_fields<PoolAttrs>(),
    .infer = infer_max_pool2d,
    .kernels = {{DeviceType::kCPU, max_pool2d_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const PoolAttrs a = PoolAttrs::from(g.attrs);
      return {
          max_pool2d_backward(g.x(0), g.dy(0), a.kernel_size, a.stride, a.padding, a.ceil_mode)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray max_pool2d(const NDArray& x, std::vector<int64_t> kernel_size, std::vector<int64_t> stride,
                   std::vector<int64_t> padding, bool ceil_mode) {
  static const ops::OpDef& op = ops::get_op("max_pool2d");
  return ops::invoke(op, {x},
                     {std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode})[0];
}
}  // namespace janus
