// avg_pool2d(x): the mean of each window of x [N, C, H, W].
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "pool.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_avg_pool2d(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const PoolGeom g = pool_geometry("avg_pool2d", x.shape, AvgPoolAttrs::from(args.attrs));
  check_pool_dtype("avg_pool2d", x.dtype);
  return {TensorSpec{Shape{g.n, g.c, g.oh, g.ow}, x.dtype, x.device}};
}

void avg_pool2d_cpu(const KernelArgs& args) {
  const AvgPoolAttrs a = AvgPoolAttrs::from(args.attrs);
  avg_pool_forward(pool_geometry("avg_pool2d", args.in(0).shape(), a), a.count_include_pad,
                   args.in(0), args.out(0), args.ctx);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "avg_pool2d",
    .doc =
        "The mean over each kernel_size window of x [N, C, H, W], moved by stride: "
        "y [N, C, OH, OW] with OH = (H + 2 * padding - KH) / stride + 1, the division rounded up "
        "in ceil_mode.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs =
        pool_attrs({{"count_include_pad", AttrType::kBool, true,
                     "divide by the whole window, padding included (else by the taps inside x)"}}),
    .attr_fields = attr_fields<AvgPoolAttrs>(),
    .infer = infer_avg_pool2d,
    .kernels = {{DeviceType::kCPU, avg_pool2d_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const AvgPoolAttrs a = AvgPoolAttrs::from(g.attrs);
      const Shape& xs = g.x(0).shape();
      return {avg_pool2d_backward(g.dy(0), {xs[2], xs[3]}, a.kernel_size, a.stride, a.padding,
                                  a.count_include_pad, a.ceil_mode)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray avg_pool2d(const NDArray& x, std::vector<int64_t> kernel_size, std::vector<int64_t> stride,
                   std::vector<int64_t> padding, bool count_include_pad, bool ceil_mode) {
  static const ops::OpDef& op = ops::get_op("avg_pool2d");
  return ops::invoke(op, {x},
                     {std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode,
                      count_include_pad})[0];
}
}  // namespace janus
