// broadcast_to(x, shape): x repeated along broadcast axes (NumPy rules) to `shape`.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_broadcast_to(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const Shape target = TargetShapeAttrs::from(args.attrs).shape;
  const Shape& s = out.shape;
  bool ok = s.ndim() <= target.ndim();
  for (int i = 0; ok && i < s.ndim(); ++i) {
    const int64_t t = target[target.ndim() - s.ndim() + i];
    ok = s[i] == t || s[i] == 1;
  }
  JANUS_CHECK(ok, ShapeError,
              "broadcast_to: cannot broadcast shape {} to {}, expected each trailing extent to "
              "match or be 1",
              s, target);
  for (int64_t d : target) {
    JANUS_CHECK(d >= 0, ShapeError, "broadcast_to: target shape {} has a negative extent", target);
  }
  out.shape = target;
  return {out};
}

void broadcast_to_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const Shape& os = args.out(0).shape();
  const std::vector<int64_t> xs = contiguous_strides(x.shape());
  const int lead = os.ndim() - x.ndim();
  std::vector<int64_t> in_strides(static_cast<size_t>(os.ndim()), 0);
  for (int i = 0; i < x.ndim(); ++i) {
    in_strides[static_cast<size_t>(lead + i)] = x.shape()[i] == 1 ? 0 : xs[static_cast<size_t>(i)];
  }
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    gather_strided<T>(x.data<T>(), 0, in_strides, args.out(0).data<T>(), os, args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "broadcast_to",
    .doc = "x repeated along broadcast axes to `shape` (NumPy broadcasting rules).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"shape", AttrType::kShape, std::nullopt, "target shape"}},
    .attr_fields = attr_fields<TargetShapeAttrs>(),
    .infer = infer_broadcast_to,
    .kernels = {{DeviceType::kCPU, broadcast_to_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {sum_to(g.dy(0), g.x(0).shape())};
    },
    .fusion = FusionClass::kBroadcast,
});

}  // namespace janus::ops

namespace janus {
NDArray broadcast_to(const NDArray& x, const Shape& shape) {
  static const ops::OpDef& op = ops::get_op("broadcast_to");
  return ops::invoke(op, {x}, {shape})[0];
}
}  // namespace janus
