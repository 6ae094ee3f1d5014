// concat(a, b, axis): a and b joined along `axis`. Two inputs: the registry has fixed input
// lists, so longer joins chain calls.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {

void join_rows(const KernelArgs& args, int64_t outer, int64_t a_block, int64_t b_block) {
  const size_t es = dtype_size(args.out(0).dtype());
  const auto* a = static_cast<const char*>(args.in(0).raw_data());
  const auto* b = static_cast<const char*>(args.in(1).raw_data());
  auto* out = static_cast<char*>(args.out(0).raw_data());
  const size_t ab = static_cast<size_t>(a_block) * es, bb = static_cast<size_t>(b_block) * es;
  if (ab + bb == 0) return;
  parallel_for(outer, args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const size_t ur = static_cast<size_t>(r);
      char* dst = out + ur * (ab + bb);
      if (ab != 0) std::memcpy(dst, a + ur * ab, ab);
      if (bb != 0) std::memcpy(dst + ab, b + ur * bb, bb);
    }
  });
}

namespace {

std::vector<TensorSpec> infer_concat(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "concat: inputs have dtypes {} and {}, expected one dtype", a.dtype, b.dtype);
  JANUS_CHECK(
      a.shape.ndim() >= 1 && a.shape.ndim() == b.shape.ndim(), ShapeError,
      "concat: inputs have shapes {} and {}, expected the same number (at least 1) of dimensions",
      a.shape, b.shape);
  const int axis = normalize_axis("concat", AxisAttrs::from(args.attrs).axis, a.shape.ndim());
  Shape out = a.shape;
  for (int i = 0; i < a.shape.ndim(); ++i) {
    JANUS_CHECK(i == axis || a.shape[i] == b.shape[i], ShapeError,
                "concat: shapes {} and {} differ on axis {}, expected equal extents except on the "
                "concatenation axis {}",
                a.shape, b.shape, i, axis);
  }
  out[axis] = a.shape[axis] + b.shape[axis];
  return {TensorSpec{out, a.dtype, a.device}};
}

void concat_cpu(const KernelArgs& args) {
  const Shape& a = args.in(0).shape();
  const int axis = normalize_axis("concat", AxisAttrs::from(args.attrs).axis, a.ndim());
  const int64_t inner = extent_product(a, axis + 1, a.ndim());
  join_rows(args, extent_product(a, 0, axis), a[axis] * inner, args.in(1).shape()[axis] * inner);
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "concat",
    .doc = "a and b joined along `axis`; other extents must match. Exactly two inputs.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{0}, "axis to join along, negative from the end"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_concat,
    .kernels = {{DeviceType::kCPU, concat_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: a and b side by side on `axis` -> the two slices.
      const int64_t axis = AxisAttrs::from(g.attrs).axis;
      const int ax = normalize_axis("concat", axis, g.x(0).ndim());
      const int64_t na = g.x(0).shape()[ax], nb = g.x(1).shape()[ax];
      return {slice_axis(g.dy(0), axis, 0, na), slice_axis(g.dy(0), axis, na, na + nb)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray concat(const NDArray& a, const NDArray& b, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("concat");
  return ops::invoke(op, {a, b}, {axis})[0];
}
}  // namespace janus
