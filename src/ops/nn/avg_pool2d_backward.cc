// avg_pool2d_backward(dy): the gradient of avg_pool2d with respect to its input.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "pool.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "avg_pool2d_backward";

// The forward geometry: x is [dy's batch, dy's channels, input_size].
PoolGeom geometry(const Shape& dy, const AvgPoolBackwardAttrs& attrs) {
  const std::vector<int64_t>& size = attrs.input_size;
  JANUS_CHECK(size.size() == 2, ValueError,
              "{}: input_size is [{}], expected 2 values (height, width)", kName,
              fmt::join(size, ", "));
  JANUS_CHECK(dy.ndim() == 4, ShapeError,
              "{}: dy has shape {}, expected 4 dimensions [batch, channels, height, width]", kName,
              dy);
  const Shape x{dy[0], dy[1], size[0], size[1]};
  const PoolGeom g = pool_geometry(kName, x, attrs);
  JANUS_CHECK(dy == (Shape{g.n, g.c, g.oh, g.ow}), ShapeError,
              "{}: dy has shape {}, expected {} (the pooled shape of input {})", kName, dy,
              Shape{g.n, g.c, g.oh, g.ow}, x);
  return g;
}

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& dy = args.inputs[0];
  const PoolGeom g = geometry(dy.shape, AvgPoolBackwardAttrs::from(args.attrs));
  check_pool_dtype(kName, dy.dtype);
  return {TensorSpec{Shape{g.n, g.c, g.h, g.w}, dy.dtype, dy.device}};
}

void kernel(const KernelArgs& args) {
  const AvgPoolBackwardAttrs a = AvgPoolBackwardAttrs::from(args.attrs);
  avg_pool_backward(geometry(args.in(0).shape(), a), a.count_include_pad, args.in(0), args.out(0),
                    args.ctx);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "avg_pool2d_backward",
    .doc = "The input gradient of avg_pool2d: each window's dy spread evenly over its taps; "
           "input_size gives H and W.",
    .inputs = {"dy"},
    .outputs = {"dx"},
    .attrs = pool_attrs({{"count_include_pad", AttrType::kBool, true, "as in avg_pool2d"},
                         {"input_size", AttrType::kInts, std::nullopt,
                          "H and W of the forward input"}}),
    .attr_fields = attr_fields<AvgPoolBackwardAttrs>(),
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    // Linear in dy, and the adjoint of avg_pool2d: its gradient is avg_pool2d again.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const AvgPoolBackwardAttrs a = AvgPoolBackwardAttrs::from(g.attrs);
      return {avg_pool2d(g.dy(0), a.kernel_size, a.stride, a.padding, a.count_include_pad,
                         a.ceil_mode)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray avg_pool2d_backward(const NDArray& dy, std::vector<int64_t> input_size,
                            std::vector<int64_t> kernel_size, std::vector<int64_t> stride,
                            std::vector<int64_t> padding, bool count_include_pad, bool ceil_mode) {
  static const ops::OpDef& op = ops::get_op("avg_pool2d_backward");
  return ops::invoke(op, {dy},
                     {std::move(kernel_size), std::move(stride), std::move(padding), ceil_mode,
                      count_include_pad, std::move(input_size)})[0];
}
}  // namespace janus
