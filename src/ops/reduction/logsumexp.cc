// logsumexp(x, axes, keepdims): log(sum(exp(x))) over the given axes, without overflow.
#include <cmath>

#include "reduce_grad.h"

namespace janus::ops {
namespace {

// Running (max m, sum of exp(x - m)) of the elements seen so far: one pass, rescaling the sum
// when a larger element arrives, so that no exp overflows.
struct LogSumExp {
  double m = -std::numeric_limits<double>::infinity();
  double s = 0.0;
  LogSumExp() = default;
  explicit LogSumExp(double v) : m(v), s(1.0) {}
};

LogSumExp fold_lse(LogSumExp acc, LogSumExp v) {
  if (v.m == -std::numeric_limits<double>::infinity()) return acc;  // exp(-inf) adds nothing
  if (v.m == acc.m) {  // also inf == inf, where inf - inf would give NaN
    acc.s += 1.0;
  } else if (v.m > acc.m) {
    acc.s = acc.s * std::exp(acc.m - v.m) + 1.0;
    acc.m = v.m;
  } else {
    acc.s += std::exp(v.m - acc.m);  // NaN elements land here and make the sum NaN
  }
  return acc;
}

std::vector<TensorSpec> infer_logsumexp(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  JANUS_CHECK(is_floating(x.dtype), TypeError,
              "logsumexp: input has dtype {}, expected a floating dtype", x.dtype);
  return infer_reduce(args);
}

void logsumexp_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), ReduceAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, LogSumExp(), fold_lse,
        [](const LogSumExp& acc, int64_t) {
          return acc.s == 0.0 ? acc.m : acc.m + std::log(acc.s);
        },
        args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "logsumexp",
    .doc = "log(sum(exp(x))) over `axes` (every axis when empty), shifted by the maximum so it "
           "never overflows.\n\nFloating dtypes only; -inf for an empty or all -inf block.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"}},
    .attr_fields = attr_fields<ReduceAttrs>(),
    .infer = infer_logsumexp,
    .kernels = {{DeviceType::kCPU, logsumexp_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy, y: reduced -> dy * softmax(x) = dy * exp(x - y) over x's shape.
      const NDArray& x = g.x(0);
      const Shape kept =
          reduced_shape(x.shape(), ReduceAttrs::from(g.attrs).axes, true, "logsumexp");
      return {mul(exp(subtract(x, reshape(g.y(0), kept))), reshape(g.dy(0), kept))};
    },
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray logsumexp(const NDArray& x, std::vector<int64_t> axes, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("logsumexp");
  return ops::invoke(op, {x}, {std::move(axes), keepdims})[0];
}
}  // namespace janus
