// Folding of reduced axes, the max/min gradient and the shape rules of max/min/argmax/argmin.
#include "reduce_grad.h"

#include <fmt/ranges.h>

#include <algorithm>

namespace janus::ops {

FoldedAxes fold_reduced_axes(std::string_view op, const NDArray& x,
                             const std::vector<int64_t>& axes) {
  const std::vector<int> ax = normalize_axes(op, axes, x.ndim());
  FoldedAxes f;
  std::vector<int64_t> kept, reduced;
  for (int i = 0; i < x.ndim(); ++i) {
    const bool r = std::find(ax.begin(), ax.end(), i) != ax.end();
    (r ? reduced : kept).push_back(i);
    (r ? f.reduced : f.outer) *= x.shape()[i];
  }
  f.perm = kept;
  f.perm.insert(f.perm.end(), reduced.begin(), reduced.end());
  std::vector<int64_t> dims;
  for (int64_t p : f.perm) dims.push_back(x.shape()[static_cast<int>(p)]);
  f.permuted = Shape(std::move(dims));
  f.x2 = reshape(transpose(x, f.perm), Shape{f.outer, f.reduced});
  return f;
}

NDArray unfold_reduced_axes(const NDArray& g2, const FoldedAxes& f) {
  std::vector<int64_t> inverse(f.perm.size());
  for (size_t i = 0; i < f.perm.size(); ++i)
    inverse[static_cast<size_t>(f.perm[i])] = static_cast<int64_t>(i);
  return transpose(reshape(g2, f.permuted), inverse);
}

std::vector<NDArray> extremum_grad(const GradArgs& g, bool is_max) {
  const NDArray& x = g.x(0);
  if (x.size() == 0) return {zeros(x.shape(), x.dtype(), x.device())};
  const FoldedAxes f =
      fold_reduced_axes(is_max ? "max" : "min", x, ReduceAttrs::from(g.attrs).axes);
  // x2: [O, R]; the winner of row o sits at flat position o * R + arg[o].
  const NDArray arg = is_max ? argmax(f.x2, 1) : argmin(f.x2, 1);
  const double total = static_cast<double>(f.outer * f.reduced);
  const NDArray at =
      add(arg, arange(0, total, static_cast<double>(f.reduced), DType::kInt64, x.device()));
  const NDArray g_flat = scatter_add(zeros(Shape{f.outer * f.reduced}, x.dtype(), x.device()), at,
                                     reshape(g.dy(0), Shape{f.outer}), 0);
  return {unfold_reduced_axes(reshape(g_flat, Shape{f.outer, f.reduced}), f)};
}

void check_reduction_nonempty(std::string_view op, const Shape& shape,
                              const std::vector<int>& axes) {
  int64_t out = 1, reduced = 1;
  for (int i = 0; i < shape.ndim(); ++i) {
    const bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    (r ? reduced : out) *= shape[i];
  }
  JANUS_CHECK(reduced > 0 || out == 0, ValueError,
              "{}: reducing shape {} over axes {} would take the {} of zero elements, expected "
              "every reduced axis to be non-empty",
              op, shape, fmt::join(axes, ", "), op);
}

std::vector<TensorSpec> infer_extremum(const InferArgs& args) {
  const Shape& s = args.inputs[0].shape;
  check_reduction_nonempty(
      args.op.name, s, normalize_axes(args.op.name, ReduceAttrs::from(args.attrs).axes, s.ndim()));
  return infer_reduce(args);
}

std::vector<TensorSpec> infer_arg_extremum(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const ArgReduceAttrs a = ArgReduceAttrs::from(args.attrs);
  const int64_t axis = a.axis;
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError, "{}: input has 0 dimensions, expected at least 1",
              args.op.name);
  check_reduction_nonempty(args.op.name, x.shape,
                           normalize_axes(args.op.name, {axis}, x.shape.ndim()));
  return {TensorSpec{reduced_shape(x.shape, {axis}, a.keepdims, args.op.name), DType::kInt64,
                     x.device}};
}

}  // namespace janus::ops
