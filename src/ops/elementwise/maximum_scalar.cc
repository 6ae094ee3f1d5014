// maximum_scalar(a, scalar): elementwise max(a, scalar); nan propagates.
#include <cmath>

#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void maximum_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    unary_scalar<T>(args, scalar, [](T x, T s) { return static_cast<T>((C(x) >= C(s) || C(x) != C(x)) ? x : s); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "maximum_scalar",
    .doc = "Elementwise larger of an array and a number (converted to its dtype); nan in a gives nan.",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_same_as_input(0),
    .kernels = {{DeviceType::kCPU, maximum_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const double s = ScalarAttrs::from(g.attrs).scalar;
      // The gradient goes where a was chosen (ties included).
      const NDArray& a = g.x(0);
      const NDArray zero = zeros({}, a.dtype(), a.device());
      return {where(greater_equal(a, full({}, s, a.dtype(), a.device())), g.dy(0), zero)};
    },
    .fusion = FusionClass::kElementwise,
});

}  // namespace janus::ops

namespace janus {
NDArray maximum(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("maximum_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
