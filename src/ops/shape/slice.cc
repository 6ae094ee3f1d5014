// slice(x, begin, end, step): a strided box of x, one (begin, end, step) per leading axis.
#include <fmt/ranges.h>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

// Per axis of x: first index, count and step (axes past the lists are taken whole).
struct Box {
  std::vector<int64_t> begin, count, step;
};

Box resolve_box(const Shape& s, const Attrs& attrs) {
  const SliceAttrs a = SliceAttrs::from(attrs);
  const std::vector<int64_t>& begin = a.begin;
  const std::vector<int64_t>& end = a.end;
  const std::vector<int64_t>& step = a.step;
  JANUS_CHECK(
      begin.size() == end.size() && (step.empty() || step.size() == begin.size()) &&
          static_cast<int>(begin.size()) <= s.ndim(),
      ValueError,
      "slice: begin {}, end {} and step {} must have one entry per sliced axis (step may be "
      "empty), at most {} for shape {}",
      begin, end, step, s.ndim(), s);
  Box box;
  for (int i = 0; i < s.ndim(); ++i) {
    const size_t ui = static_cast<size_t>(i);
    if (ui >= begin.size()) {
      box.begin.push_back(0);
      box.count.push_back(s[i]);
      box.step.push_back(1);
      continue;
    }
    const int64_t st = step.empty() ? 1 : step[ui];
    JANUS_CHECK(st > 0, ValueError,
                "slice: step {} on axis {} is not supported, expected a positive step", st, i);
    const int64_t b = normalize_bound("slice", "begin", begin[ui], s[i], i);
    const int64_t e = normalize_bound("slice", "end", end[ui], s[i], i);
    box.begin.push_back(b);
    box.count.push_back(e > b ? (e - b + st - 1) / st : 0);
    box.step.push_back(st);
  }
  return box;
}

std::vector<TensorSpec> infer_slice(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  out.shape = Shape(resolve_box(out.shape, args.attrs).count);
  return {out};
}

void slice_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const Box box = resolve_box(x.shape(), args.attrs);
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  int64_t offset = 0;
  std::vector<int64_t> in_strides;
  for (size_t i = 0; i < strides.size(); ++i) {
    offset += box.begin[i] * strides[i];
    in_strides.push_back(box.step[i] * strides[i]);
  }
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    gather_strided<T>(x.data<T>(), offset, in_strides, args.out(0).data<T>(), args.out(0).shape(),
                      args.ctx);
  });
}

// dy: the box -> zeros elsewhere. Unit steps pad; other steps scatter dy's elements to their
// flat positions in x.
std::vector<NDArray> slice_grad(const GradArgs& g) {
  const NDArray& x = g.x(0);
  const Box box = resolve_box(x.shape(), g.attrs);
  const bool unit = std::all_of(box.step.begin(), box.step.end(), [](int64_t s) { return s == 1; });
  if (unit) {
    std::vector<int64_t> widths;
    for (int i = 0; i < x.ndim(); ++i) {
      const size_t ui = static_cast<size_t>(i);
      widths.push_back(box.begin[ui]);
      widths.push_back(x.shape()[i] - box.begin[ui] - box.count[ui]);
    }
    return {pad(g.dy(0), widths)};
  }
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  const Shape& ys = g.dy(0).shape();
  std::vector<int64_t> positions(static_cast<size_t>(ys.numel()));
  for (int64_t e = 0; e < ys.numel(); ++e) {
    int64_t rem = e, pos = 0;
    for (int d = ys.ndim() - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      pos += (box.begin[ud] + (rem % ys[d]) * box.step[ud]) * strides[ud];
      rem /= ys[d];
    }
    positions[static_cast<size_t>(e)] = pos;
  }
  const NDArray index =
      from_vector<int64_t>(positions, Shape{ys.numel()}, DType::kInt64, x.device());
  const NDArray flat = zeros(Shape{x.size()}, x.dtype(), x.device());
  return {reshape(scatter_add(flat, index, reshape(g.dy(0), Shape{ys.numel()}), 0), x.shape())};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "slice",
    .doc = "A strided box: per leading axis i, indices begin[i], begin[i] + step[i], ... below "
           "end[i].\n\n"
           "Bounds lie in [-extent, extent] (negative from the end); steps are positive (all 1 "
           "when `step` is empty); axes past the lists are taken whole.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"begin", AttrType::kInts, std::nullopt, "first index per sliced axis"},
              {"end", AttrType::kInts, std::nullopt, "end (excluded) per sliced axis"},
              {"step", AttrType::kInts, std::vector<int64_t>{},
               "positive step per sliced axis; all 1 when empty"}},
    .attr_fields = attr_fields<SliceAttrs>(),
    .infer = infer_slice,
    .kernels = {{DeviceType::kCPU, slice_cpu}},
    .grad = slice_grad,
});

}  // namespace janus::ops

namespace janus {
NDArray slice(const NDArray& x, std::vector<int64_t> begin, std::vector<int64_t> end,
              std::vector<int64_t> step) {
  static const ops::OpDef& op = ops::get_op("slice");
  return ops::invoke(op, {x}, {std::move(begin), std::move(end), std::move(step)})[0];
}
}  // namespace janus
