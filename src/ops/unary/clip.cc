// clip(x, a_min, a_max): min(max(x, a_min), a_max) elementwise, every dtype.
#include "janus/ops/ops.h"

#include "unary_attrs.h"
#include "unary_op.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_clip(const InferArgs& args) {
  const ClipAttrs a = ClipAttrs::from(args.attrs);
  const double lo = a.a_min;
  const double hi = a.a_max;
  JANUS_CHECK(lo <= hi, ValueError,
              "clip: a_min {} is greater than a_max {}, expected a_min <= a_max", lo, hi);
  return {args.inputs[0]};
}

void clip_cpu(const KernelArgs& args) {
  const ClipAttrs a = ClipAttrs::from(args.attrs);
  const double a_min = a.a_min;
  const double a_max = a.a_max;
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const C lo = static_cast<C>(from_double<T>(a_min));
    const C hi = static_cast<C>(from_double<T>(a_max));
    const T* px = args.in(0).data<T>();
    T* py = args.out(0).data<T>();
    parallel_for(args.out(0).size(), args.ctx, [&](int64_t b, int64_t e) {
      simd::map1(py + b, px + b, e - b, [lo, hi](T v) {
        const C x = static_cast<C>(v);
        return static_cast<T>(x < lo ? lo : (x > hi ? hi : x));  // nan stays nan
      });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "clip",
    .doc = "min(max(x, a_min), a_max), elementwise; the bounds are converted to x's dtype and "
           "nan stays nan.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"a_min", AttrType::kFloat, std::nullopt, "lower bound"},
              {"a_max", AttrType::kFloat, std::nullopt, "upper bound (>= a_min)"}},
    .attr_fields = attr_fields<ClipAttrs>(),
    .infer = infer_clip,
    .kernels = {{DeviceType::kCPU, clip_cpu}},
    // The gradient passes where a_min < x < a_max, and is 0 where x was clipped.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray& x = g.x(0);
      const ClipAttrs a = ClipAttrs::from(g.attrs);
      const NDArray lo = full({}, a.a_min, x.dtype(), x.device());
      const NDArray hi = full({}, a.a_max, x.dtype(), x.device());
      const NDArray zero = zeros({}, g.dy(0).dtype(), g.dy(0).device());
      return {where(greater(x, lo), where(less(x, hi), g.dy(0), zero), zero)};
    },
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray clip(const NDArray& x, double a_min, double a_max) {
  static const ops::OpDef& op = ops::get_op("clip");
  return ops::invoke(op, {x}, {a_min, a_max})[0];
}
}  // namespace janus
