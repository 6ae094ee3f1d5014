// take_along_axis(x, indices, axis): x's elements at `indices` along one axis, as NumPy's
// take_along_axis (what argsort's positions select); the adjoint of scatter_along_axis.
#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "../shape/shape_attrs.h"
#include "order.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_take_along_axis(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& index = args.inputs[1];
  const RowLayout L = RowLayout::of("take_along_axis", x.shape, AxisAttrs::from(args.attrs).axis);
  bool fits = index.shape.ndim() == x.shape.ndim();
  for (int d = 0; fits && d < x.shape.ndim(); ++d)
    fits = d == L.axis || index.shape[d] == x.shape[d];
  JANUS_CHECK(fits, ShapeError,
              "take_along_axis: indices have shape {}, expected x's shape {} except along axis {}",
              index.shape, x.shape, L.axis);
  check_order_index_dtype("take_along_axis", index.dtype, L.n);
  return {TensorSpec{index.shape, x.dtype, x.device}};
}

void take_along_axis_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const NDArray& index = args.in(1);
  const RowLayout L = RowLayout::of("take_along_axis", x.shape(), AxisAttrs::from(args.attrs).axis);
  RowLayout P = L;
  P.n = index.shape()[L.axis];
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    T* out = args.out(0).data<T>();
    dispatch_index_dtype(index.dtype(), [&]<typename I>() {
      const I* idx = index.data<I>();
      check_positions("take_along_axis", idx, index.size(), L.n);
      parallel_for(
          L.rows(), args.ctx,
          [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
              for (int64_t j = 0; j < P.n; ++j) {
                out[P.at(r, j)] = in[L.at(r, wrap_position(idx[P.at(r, j)], L.n))];
              }
            }
          },
          P.n);
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "take_along_axis",
    .doc = "x's elements at `indices` along `axis` (NumPy's take_along_axis without "
           "broadcasting): indices have x's shape except along the axis, positions in [-n, n).",
    .inputs = {"x", "indices"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to select along, negative from the end"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_take_along_axis,
    .kernels = {{DeviceType::kCPU, take_along_axis_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const RowLayout L =
          RowLayout::of("take_along_axis", g.x(0).shape(), AxisAttrs::from(g.attrs).axis);
      return {scatter_along_axis(g.dy(0), g.x(1), L.axis, L.n), NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray take_along_axis(const NDArray& x, const NDArray& indices, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("take_along_axis");
  return ops::invoke(op, {x, indices}, {axis})[0];
}
}  // namespace janus
