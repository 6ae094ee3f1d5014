// where(cond, a, b): a where cond is nonzero, b elsewhere; all three broadcast together.
#include "janus/ops/ops.h"

#include "nary_loop.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_where(const InferArgs& args) {
  const TensorSpec& cond = args.inputs[0];
  const TensorSpec& a = args.inputs[1];
  const TensorSpec& b = args.inputs[2];
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "where: a and b have dtypes {} and {}, expected the same dtype (cast one first)",
              a.dtype, b.dtype);
  const Shape ab = broadcast_shapes(args.op.name, a.shape, b.shape);
  return {TensorSpec{broadcast_shapes(args.op.name, cond.shape, ab), a.dtype, a.device}};
}

void where_cpu(const KernelArgs& args) {
  dispatch_dtype(args.in(0).dtype(), [&]<typename C>() {
    dispatch_dtype(args.out(0).dtype(), [&]<typename T>() {
      broadcast_map<T, C, T, T>(args, [](C c, T x, T y) { return compute_t<C>(c) != 0 ? x : y; });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "where",
    .doc = "Elementwise cond ? a : b, cond of any dtype (nonzero is true), a and b of one dtype; "
           "the three broadcast together (NumPy).",
    .inputs = {"cond", "a", "b"},
    .outputs = {"y"},
    .infer = infer_where,
    .kernels = {{DeviceType::kCPU, where_cpu}},
    // dy: the broadcast shape; it goes to a where cond holds and to b elsewhere. cond has none.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const NDArray zero = zeros({}, g.dy(0).dtype(), g.dy(0).device());
      return {NDArray(), sum_to(where(g.x(0), g.dy(0), zero), g.x(1).shape()),
              sum_to(where(g.x(0), zero, g.dy(0)), g.x(2).shape())};
    },
    .fusion = FusionClass::kBroadcast,
    .inplace_input = 1,  // a: relu's gradient where(y > 0, dy, 0) overwrites dy
});

}  // namespace janus::ops

namespace janus {
NDArray where(const NDArray& cond, const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("where");
  return ops::invoke(op, {cond, a, b})[0];
}
}  // namespace janus
