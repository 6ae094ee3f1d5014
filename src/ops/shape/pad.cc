// pad(x, widths, value): x surrounded by `value`, widths (before, after) per axis.
#include <fmt/ranges.h>

#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

const std::vector<int64_t>& checked_widths(const Shape& s, const PadAttrs& attrs) {
  const std::vector<int64_t>& widths = attrs.widths;
  JANUS_CHECK(static_cast<int>(widths.size()) == 2 * s.ndim(), ValueError,
              "pad: widths {} has {} entries for shape {}, expected {} (before, after per axis)",
              widths, widths.size(), s, 2 * s.ndim());
  for (int64_t w : widths) {
    JANUS_CHECK(w >= 0, ValueError,
                "pad: widths {} has the negative entry {}, expected widths >= 0", widths, w);
  }
  return widths;
}

std::vector<TensorSpec> infer_pad(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const PadAttrs a = PadAttrs::from(args.attrs);
  const auto& w = checked_widths(out.shape, a);
  for (int i = 0; i < out.shape.ndim(); ++i) {
    out.shape[i] += w[static_cast<size_t>(2 * i)] + w[static_cast<size_t>(2 * i + 1)];
  }
  return {out};
}

void pad_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const NDArray& y = args.out(0);
  const PadAttrs a = PadAttrs::from(args.attrs);
  const auto& w = checked_widths(x.shape(), a);
  const double value = a.value;
  const std::vector<int64_t> ys = contiguous_strides(y.shape());
  const int nd = x.ndim();
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    T* out = y.data<T>();
    const T fill = from_double<T>(value);
    parallel_for(y.size(), args.ctx,
                 [&](int64_t lo, int64_t hi) { std::fill(out + lo, out + hi, fill); });
    if (x.size() == 0) return;
    if (nd == 0) {
      out[0] = x.data<T>()[0];
      return;
    }
    // Rows of x (its last axis) land at their shifted offsets in y.
    const int64_t inner = x.shape()[nd - 1];
    const T* in = x.data<T>();
    parallel_for(x.size() / inner, args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        int64_t rem = r, dst = w[static_cast<size_t>(2 * (nd - 1))];
        for (int d = nd - 2; d >= 0; --d) {
          dst += (rem % x.shape()[d] + w[static_cast<size_t>(2 * d)]) * ys[static_cast<size_t>(d)];
          rem /= x.shape()[d];
        }
        std::copy(in + r * inner, in + (r + 1) * inner, out + dst);
      }
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "pad",
    .doc = "x surrounded by a constant: widths holds (before, after) for each axis, all >= 0.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"widths", AttrType::kInts, std::nullopt, "before0, after0, before1, after1, ..."},
              {"value", AttrType::kFloat, 0.0, "the constant"}},
    .attr_fields = attr_fields<PadAttrs>(),
    .infer = infer_pad,
    .kernels = {{DeviceType::kCPU, pad_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: padded -> the interior box.
      const Shape& s = g.x(0).shape();
      const std::vector<int64_t> w = PadAttrs::from(g.attrs).widths;
      std::vector<int64_t> begin, end;
      for (int i = 0; i < s.ndim(); ++i) {
        begin.push_back(w[static_cast<size_t>(2 * i)]);
        end.push_back(w[static_cast<size_t>(2 * i)] + s[i]);
      }
      return {slice(g.dy(0), begin, end)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray pad(const NDArray& x, std::vector<int64_t> widths, double value) {
  static const ops::OpDef& op = ops::get_op("pad");
  return ops::invoke(op, {x}, {std::move(widths), value})[0];
}
}  // namespace janus
