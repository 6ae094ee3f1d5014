// reshape_like(x, like, x_axes, like_axes): x's elements in a shape taken from another array's
// shape, not from attributes: x's axes [begin, end) replaced by like's axes [begin, end) (MXNet's
// reshape_like with lhs_begin, lhs_end, rhs_begin, rhs_end); by default the whole of like's.
#include <fmt/ranges.h>

#include <utility>

#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

// [begin, end) of a shape's axes from an axes attribute ({}, {begin} or {begin, end}; negative
// values count from the end), checked against the array's `ndim` axes.
std::pair<int, int> axis_range(const std::vector<int64_t>& axes, const char* attr,
                               const char* array, const Shape& shape) {
  const int ndim = shape.ndim();
  JANUS_CHECK(axes.size() <= 2, ValueError,
              "reshape_like: {} has {} values, expected none (every axis of {}), [begin] or "
              "[begin, end]",
              attr, axes.size(), array);
  auto bound = [&](size_t i, int64_t fallback) -> int64_t {
    if (i >= axes.size()) return fallback;
    const int64_t a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    JANUS_CHECK(a >= 0 && a <= ndim, ValueError,
                "reshape_like: {} [{}] reaches past the {} axes of {} (shape {}), expected "
                "bounds in [-{}, {}]",
                attr, fmt::join(axes, ", "), ndim, array, shape, ndim, ndim);
    return a;
  };
  const int64_t begin = bound(0, 0), end = bound(1, ndim);
  JANUS_CHECK(begin <= end, ValueError,
              "reshape_like: {} [{}] begins at axis {} after its end {} (of {}, shape {})", attr,
              fmt::join(axes, ", "), begin, end, array, shape);
  return {static_cast<int>(begin), static_cast<int>(end)};
}

std::vector<TensorSpec> infer_reshape_like(const InferArgs& args) {
  const Shape& x = args.inputs[0].shape;
  const Shape& like = args.inputs[1].shape;
  const ReshapeLikeAttrs a = ReshapeLikeAttrs::from(args.attrs);
  const auto [xb, xe] = axis_range(a.x_axes, "x_axes", "x", x);
  const auto [lb, le] = axis_range(a.like_axes, "like_axes", "like", like);
  std::vector<int64_t> dims(x.begin(), x.begin() + xb);
  dims.insert(dims.end(), like.begin() + lb, like.begin() + le);
  dims.insert(dims.end(), x.begin() + xe, x.end());
  const Shape target(std::move(dims));
  JANUS_CHECK(x.numel() == target.numel(), ShapeError,
              "reshape_like: x of shape {} has {} elements and the shape {} taken from like "
              "(shape {}) has {}, expected as many",
              x, x.numel(), target, like, target.numel());
  TensorSpec out = args.inputs[0];
  out.shape = target;
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "reshape_like",
    .doc = "x's elements in x's shape with its axes [begin, end) of x_axes replaced by like's "
           "axes [begin, end) of like_axes (by default: like's shape); as many elements in both. "
           "Differentiable in x only (like gives its shape).",
    .inputs = {"x", "like"},
    .outputs = {"y"},
    .attrs = {{"x_axes", AttrType::kInts, std::vector<int64_t>{},
               "x's axes to replace: {} every one, {begin} to the last, {begin, end}; negative "
               "from the end"},
              {"like_axes", AttrType::kInts, std::vector<int64_t>{},
               "like's axes that replace them, in the same form"}},
    .attr_fields = attr_fields<ReshapeLikeAttrs>(),
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
NDArray reshape_like(const NDArray& x, const NDArray& like, std::vector<int64_t> x_axes,
                     std::vector<int64_t> like_axes) {
  static const ops::OpDef& op = ops::get_op("reshape_like");
  return ops::invoke(op, {x, like}, {std::move(x_axes), std::move(like_axes)})[0];
}
}  // namespace janus
