// Axis handling and iteration plans shared by the reductions.
#include "reduce.h"

#include <algorithm>

namespace janus::ops {

std::vector<int> normalize_axes(std::string_view op, const std::vector<int64_t>& axes, int ndim) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) {
    JANUS_CHECK(a >= -ndim && a < ndim, IndexError,
                "{}: axis {} is out of range for an array of {} dimensions, expected in [{}, {})",
                op, a, ndim, -ndim, ndim);
    out.push_back(static_cast<int>(a < 0 ? a + ndim : a));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims,
                    std::string_view op) {
  const std::vector<int> ax = normalize_axes(op, axes, shape.ndim());
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.ndim(); ++i) {
    const bool reduced = std::find(ax.begin(), ax.end(), i) != ax.end();
    if (!reduced) {
      dims.push_back(shape[i]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return Shape(std::move(dims));
}

std::vector<TensorSpec> infer_reduce(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const ReduceAttrs a = ReduceAttrs::from(args.attrs);
  return {TensorSpec{reduced_shape(x.shape, a.axes, a.keepdims, args.op.name), x.dtype, x.device}};
}

ReducePlan plan_reduce(const Shape& shape, const std::vector<int64_t>& axes) {
  const std::vector<int> ax = normalize_axes("reduce", axes, shape.ndim());
  ReducePlan p;
  int64_t stride = 1;
  std::vector<int64_t> strides(static_cast<size_t>(shape.ndim()));
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= shape[i];
  }
  for (int i = 0; i < shape.ndim(); ++i) {
    const bool reduced = std::find(ax.begin(), ax.end(), i) != ax.end();
    auto& extents = reduced ? p.reduce_extents : p.keep_extents;
    auto& st = reduced ? p.reduce_strides : p.keep_strides;
    extents.push_back(shape[i]);
    st.push_back(strides[static_cast<size_t>(i)]);
    (reduced ? p.reduce_size : p.out_size) *= shape[i];
  }
  if (!ax.empty()) {
    for (int i = ax.back() + 1; i < shape.ndim(); ++i) {
      p.inner *= shape[i];
      ++p.inner_axes;
    }
  }
  return p;
}

}  // namespace janus::ops
