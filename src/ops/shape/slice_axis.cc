// slice_axis(x, axis, begin, end): the range [begin, end) of one axis; split() is built on it.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

struct AxisRange {
  int axis;
  int64_t begin, end;  // normalised, begin <= end
};

AxisRange resolve_range(const Shape& s, const Attrs& attrs) {
  JANUS_CHECK(s.ndim() >= 1, ShapeError, "slice_axis: input has 0 dimensions, expected at least 1");
  const SliceAxisAttrs a = SliceAxisAttrs::from(attrs);
  const int axis = normalize_axis("slice_axis", a.axis, s.ndim());
  const int64_t begin = normalize_bound("slice_axis", "begin", a.begin, s[axis], axis);
  const int64_t end = normalize_bound("slice_axis", "end", a.end, s[axis], axis);
  return {axis, begin, std::max(begin, end)};
}

std::vector<TensorSpec> infer_slice_axis(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const AxisRange r = resolve_range(out.shape, args.attrs);
  out.shape[r.axis] = r.end - r.begin;
  return {out};
}

void slice_axis_cpu(const KernelArgs& args) {
  const Shape& s = args.in(0).shape();
  const AxisRange r = resolve_range(s, args.attrs);
  const size_t es = dtype_size(args.in(0).dtype());
  const size_t inner = static_cast<size_t>(extent_product(s, r.axis + 1, s.ndim())) * es;
  const size_t row_in = static_cast<size_t>(s[r.axis]) * inner;
  const size_t row_out = static_cast<size_t>(r.end - r.begin) * inner;
  if (row_out == 0) return;
  const auto* in =
      static_cast<const char*>(args.in(0).raw_data()) + static_cast<size_t>(r.begin) * inner;
  auto* out = static_cast<char*>(args.out(0).raw_data());
  parallel_for(extent_product(s, 0, r.axis), args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) {
      std::memcpy(out + static_cast<size_t>(o) * row_out, in + static_cast<size_t>(o) * row_in,
                  row_out);
    }
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "slice_axis",
    .doc = "The range [begin, end) of one axis (bounds in [-extent, extent]; empty when end <= "
           "begin).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, std::nullopt, "axis to slice, negative from the end"},
              {"begin", AttrType::kInt, std::nullopt, "first index, negative from the end"},
              {"end", AttrType::kInt, std::nullopt,
               "one past the last index, negative from the end"}},
    .attr_fields = attr_fields<SliceAxisAttrs>(),
    .infer = infer_slice_axis,
    .kernels = {{DeviceType::kCPU, slice_axis_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: the slice -> zeros before and after it on the axis.
      const Shape& s = g.x(0).shape();
      const AxisRange r = resolve_range(s, g.attrs);
      std::vector<int64_t> widths(static_cast<size_t>(2 * s.ndim()), 0);
      widths[static_cast<size_t>(2 * r.axis)] = r.begin;
      widths[static_cast<size_t>(2 * r.axis + 1)] = s[r.axis] - r.end;
      return {pad(g.dy(0), widths)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray slice_axis(const NDArray& x, int64_t axis, int64_t begin, int64_t end) {
  static const ops::OpDef& op = ops::get_op("slice_axis");
  return ops::invoke(op, {x}, {axis, begin, end})[0];
}

std::vector<NDArray> split(const NDArray& x, int64_t sections, int64_t axis) {
  JANUS_CHECK(x.ndim() >= 1, ShapeError, "split: input has 0 dimensions, expected at least 1");
  const int ax = ops::normalize_axis("split", axis, x.ndim());
  const int64_t extent = x.shape()[ax];
  JANUS_CHECK(sections > 0 && extent % sections == 0, ValueError,
              "split: axis {} of shape {} has extent {}, which {} sections cannot divide equally",
              axis, x.shape(), extent, sections);
  const int64_t step = extent / sections;
  std::vector<NDArray> parts;
  for (int64_t i = 0; i < sections; ++i)
    parts.push_back(slice_axis(x, axis, i * step, (i + 1) * step));
  return parts;
}
}  // namespace janus
