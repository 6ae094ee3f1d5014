// squeeze(x, axes): x without the given axes of extent 1 (every extent-1 axis when empty).
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_squeeze(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const Shape& s = out.shape;
  const std::vector<int64_t> axes = AxesAttrs::from(args.attrs).axes;
  std::vector<bool> drop(static_cast<size_t>(s.ndim()), false);
  for (int i = 0; i < s.ndim(); ++i) drop[static_cast<size_t>(i)] = axes.empty() && s[i] == 1;
  for (int64_t a : axes) {
    const int axis = normalize_axis("squeeze", a, s.ndim());
    JANUS_CHECK(s[axis] == 1, ShapeError, "squeeze: axis {} of shape {} has extent {}, expected 1",
                a, s, s[axis]);
    drop[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < s.ndim(); ++i) {
    if (!drop[static_cast<size_t>(i)]) dims.push_back(s[i]);
  }
  out.shape = Shape(std::move(dims));
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "squeeze",
    .doc = "x without the given axes, which must have extent 1; every extent-1 axis when empty.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to remove, negative from the end"}},
    .attr_fields = attr_fields<AxesAttrs>(),
    .infer = infer_squeeze,
    .kernels = {{DeviceType::kCPU, copy_all}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {reshape(g.dy(0), g.x(0).shape())};
    },
    .fusion = FusionClass::kElementwise,
    .inplace_input = 0,
    .view_of = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray squeeze(const NDArray& x, std::vector<int64_t> axes) {
  static const ops::OpDef& op = ops::get_op("squeeze");
  return ops::invoke(op, {x}, {std::move(axes)})[0];
}
}  // namespace janus
