// slice_like(x, like, axes): the leading box of x that has like's extents on `axes` (MXNet's
// slice_like): the bounds come from another array's shape, not from attributes.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

// The extents of the result: x's, with like's on each sliced axis. With no axes every axis is
// sliced and the two must have the same number of dimensions (as in MXNet).
Shape slice_like_shape(const Shape& x, const Shape& like, const Attrs& attrs) {
  const std::vector<int64_t>& axes = AxesAttrs::from(attrs).axes;
  std::vector<int64_t> dims(x.begin(), x.end());
  auto take_extent = [&](int axis) {
    JANUS_CHECK(axis < like.ndim(), ShapeError,
                "slice_like: axis {} is past the last axis of like (shape {}), whose extent it "
                "would take",
                axis, like);
    JANUS_CHECK(like[axis] <= x[axis], ShapeError,
                "slice_like: like (shape {}) has extent {} on axis {}, more than x's {} (shape {})",
                like, like[axis], axis, x[axis], x);
    dims[static_cast<size_t>(axis)] = like[axis];
  };
  if (axes.empty()) {
    JANUS_CHECK(like.ndim() == x.ndim(), ShapeError,
                "slice_like: x has shape {} and like {}: with no axes every axis is sliced, "
                "which needs as many dimensions in both",
                x, like);
    for (int a = 0; a < x.ndim(); ++a) take_extent(a);
  }
  for (int64_t axis : axes) take_extent(normalize_axis("slice_like", axis, x.ndim()));
  return Shape(std::move(dims));
}

std::vector<TensorSpec> infer_slice_like(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  out.shape = slice_like_shape(out.shape, args.inputs[1].shape, args.attrs);
  return {out};
}

void slice_like_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    gather_strided<T>(x.data<T>(), 0, contiguous_strides(x.shape()), args.out(0).data<T>(),
                      args.out(0).shape(), args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "slice_like",
    .doc = "The leading box of x with like's extents on `axes` (every axis when empty, which "
           "needs x.ndim == like.ndim); other axes whole. Each sliced extent of like must be at "
           "most x's. Differentiable in x only (like gives its shape).",
    .inputs = {"x", "like"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes of x to slice, negative from the end of x; empty: every axis"}},
    .attr_fields = attr_fields<AxesAttrs>(),
    .infer = infer_slice_like,
    .kernels = {{DeviceType::kCPU, slice_like_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: the box -> zeros after it on each axis.
      const Shape& s = g.x(0).shape();
      const Shape& out = g.dy(0).shape();
      std::vector<int64_t> widths(static_cast<size_t>(2 * s.ndim()), 0);
      for (int a = 0; a < s.ndim(); ++a) widths[static_cast<size_t>(2 * a + 1)] = s[a] - out[a];
      return {pad(g.dy(0), widths), NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray slice_like(const NDArray& x, const NDArray& like, std::vector<int64_t> axes) {
  static const ops::OpDef& op = ops::get_op("slice_like");
  return ops::invoke(op, {x, like}, {std::move(axes)})[0];
}
}  // namespace janus
