// norm(x, axes, keepdims, ord): the L2 norm over the given axes (all when empty).
#include <cmath>

#include "reduce_grad.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_norm(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  JANUS_CHECK(is_floating(x.dtype), TypeError,
              "norm: input has dtype {}, expected a floating dtype", x.dtype);
  const NormAttrs a = NormAttrs::from(args.attrs);
  JANUS_CHECK(a.ord == 2, NotImplementedError, "norm: ord {} is not supported, expected 2 (L2)",
              a.ord);
  return {TensorSpec{reduced_shape(x.shape, a.axes, a.keepdims, "norm"), x.dtype, x.device}};
}

void norm_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), NormAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, 0.0,
        [](double acc, double v) { return acc + v * v; },
        [](double acc, int64_t) { return std::sqrt(acc); }, args.ctx);
  });
}

// The smallest normal number of `dtype`: a divisor that only changes 0 / 0.
double smallest_normal(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return std::numeric_limits<double>::min();
    case DType::kFloat16:
      return 6.103515625e-05;
    default:
      return static_cast<double>(std::numeric_limits<float>::min());
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "norm",
    .doc =
        "L2 norm sqrt(sum x^2) over `axes` (every axis when empty); only ord = 2 is supported.\n\n"
        "Floating dtypes only. The gradient x / norm is taken as 0 where the norm is 0.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"},
              {"ord", AttrType::kInt, int64_t{2}, "order of the norm; only 2"}},
    .attr_fields = attr_fields<NormAttrs>(),
    .infer = infer_norm,
    .kernels = {{DeviceType::kCPU, norm_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy, y: reduced -> dy * x / y over x's shape; a zero norm has x = 0 in its block, so
      // dividing by max(y, tiny) gives the subgradient 0 there.
      const NDArray& x = g.x(0);
      const Shape kept = reduced_shape(x.shape(), NormAttrs::from(g.attrs).axes, true, "norm");
      const NDArray y = maximum(reshape(g.y(0), kept), smallest_normal(x.dtype()));
      return {mul(divide(x, y), reshape(g.dy(0), kept))};
    },
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray norm(const NDArray& x, std::vector<int64_t> axes, bool keepdims, int64_t ord) {
  static const ops::OpDef& op = ops::get_op("norm");
  return ops::invoke(op, {x}, {std::move(axes), keepdims, ord})[0];
}
}  // namespace janus
