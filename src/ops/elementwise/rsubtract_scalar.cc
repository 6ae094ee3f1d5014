// rsubtract_scalar(a, scalar): elementwise scalar - a.
#include <cmath>

#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "janus/ops/ops.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

void rsubtract_scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
    unary_scalar<T>(args, scalar, [](T x, T s) { return wrapping_sub(s, x); });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "rsubtract_scalar",
    .doc = "Elementwise scalar - a (the number converted to the array's dtype).",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
    .attr_fields = attr_fields<ScalarAttrs>(),
    .infer = infer_same_as_input(0),
    .kernels = {{DeviceType::kCPU, rsubtract_scalar_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {negative(g.dy(0))};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray subtract(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rsubtract_scalar");
  return ops::invoke(op, {a}, {scalar})[0];
}
}  // namespace janus
