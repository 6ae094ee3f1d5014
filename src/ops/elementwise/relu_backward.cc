// relu_backward(y, dy) = dy where relu passed its input through (y > 0 or NaN), else 0: relu's
// gradient in one pass, with no mask array in between.
#include "relu_backward.h"

#include "janus/ops/ops.h"

#include "binary_loop.h"
#include "nary_loop.h"
#include "relu_rule.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_relu_backward(const InferArgs& args) {
  const TensorSpec& y = args.inputs[0];
  const TensorSpec& dy = args.inputs[1];
  JANUS_CHECK(y.shape == dy.shape, ShapeError,
              "relu_backward: y has shape {} but dy has shape {}, expected one shape", y.shape,
              dy.shape);
  JANUS_CHECK(y.dtype == dy.dtype, TypeError,
              "relu_backward: y is {} but dy is {}, expected one dtype", y.dtype, dy.dtype);
  return {dy};
}

void relu_backward_cpu(const KernelArgs& args) {
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    binary_broadcast<T>(args, [](T y, T dy) { return relu_passes(C(y)) ? dy : T(0); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "relu_backward",
    .doc = "dy where y > 0 or y is NaN, else 0: the gradient of relu from its output y. At a NaN "
           "relu passed its input through, so the gradient passes too (as PyTorch's "
           "threshold_backward); at y = 0 it is 0.",
    .inputs = {"y", "dy"},
    .outputs = {"dx"},
    .infer = infer_relu_backward,
    .kernels = {{DeviceType::kCPU, relu_backward_cpu}},
    // Linear in dy with the same mask; piecewise constant in y (zero gradient).
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {g.needs(0) ? zeros(g.x(0).shape(), g.x(0).dtype(), g.x(0).device()) : NDArray(),
              g.needs(1) ? relu_backward(g.x(0), g.dy(0)) : NDArray()};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 1,  // dx over dy
});

NDArray relu_backward(const NDArray& y, const NDArray& dy) {
  static const OpDef& op = get_op("relu_backward");
  return invoke(op, {y, dy})[0];
}

}  // namespace janus::ops
