// reshape_like(x, like): x's elements in like's shape (MXNet's reshape_like without ranges):
// the target comes from another array's shape, not from attributes.
#include "janus/ops/ops.h"

#include "layout.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_reshape_like(const InferArgs& args) {
  const Shape& x = args.inputs[0].shape;
  const Shape& like = args.inputs[1].shape;
  JANUS_CHECK(x.numel() == like.numel(), ShapeError,
              "reshape_like: x of shape {} has {} elements and like of shape {} has {}, expected "
              "as many",
              x, x.numel(), like, like.numel());
  TensorSpec out = args.inputs[0];
  out.shape = like;
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "reshape_like",
    .doc = "x's elements in like's shape (as many elements in both). Differentiable in x only "
           "(like gives its shape).",
    .inputs = {"x", "like"},
    .outputs = {"y"},
    .infer = infer_reshape_like,
    // As reshape: imperative calls return a view and never run the kernel; a compiled graph
    // usually gives the output the input's buffer (copy_all then moves nothing).
    .kernels = {{DeviceType::kCPU, copy_all}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {reshape(g.dy(0), g.x(0).shape()), NDArray()};
    },
    .inplace_input = 0,
    .view_of = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray reshape_like(const NDArray& x, const NDArray& like) {
  static const ops::OpDef& op = ops::get_op("reshape_like");
  return ops::invoke(op, {x, like}, {})[0];
}
}  // namespace janus
