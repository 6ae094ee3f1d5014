// cast(x, dtype): x converted elementwise to another dtype.
#include <type_traits>

#include "janus/ops/ops.h"

#include "unary_attrs.h"
#include "unary_op.h"

namespace janus::ops {
namespace {

// One element from From to To: integers convert exactly (wrapping modulo 2^n when narrowing,
// as C++20 defines), floating to integer truncates and saturates (from_double), nonzero is true.
template <typename To, typename From>
To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(x) != compute_t<From>(0);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To>) {
    return from_double<To>(static_cast<double>(static_cast<compute_t<From>>(x)));
  } else {
    return To(static_cast<compute_t<To>>(static_cast<compute_t<From>>(x)));
  }
}

std::vector<TensorSpec> infer_cast(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  out.dtype = CastAttrs::from(args.attrs).dtype;
  return {out};
}

void cast_cpu(const KernelArgs& args) {
  dispatch_dtype(args.in(0).dtype(), [&]<typename From>() {
    dispatch_dtype(args.out(0).dtype(), [&]<typename To>() {
      const From* __restrict px = args.in(0).data<From>();
      To* __restrict py = args.out(0).data<To>();
      parallel_for(args.out(0).size(), args.ctx, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) py[i] = convert<To, From>(px[i]);
      });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "cast",
    .doc = "x converted to `dtype`, elementwise: floating to integer truncates toward zero and "
           "saturates (nan gives 0), integers wrap when narrowing, nonzero is true.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"dtype", AttrType::kDType, std::nullopt, "the dtype of the result"}},
    .attr_fields = attr_fields<CastAttrs>(),
    .infer = infer_cast,
    .kernels = {{DeviceType::kCPU, cast_cpu}},
    // The gradient is cast back to x's dtype (none for an integer x).
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      if (!is_floating(g.x(0).dtype())) return {NDArray()};
      return {cast(g.dy(0), g.x(0).dtype())};
    },
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray cast(const NDArray& x, DType dtype) {
  static const ops::OpDef& op = ops::get_op("cast");
  return ops::invoke(op, {x}, {dtype})[0];
}
}  // namespace janus
