// scatter_along_axis(dy, indices, axis, n): the adjoint of take_along_axis, and so the gradient
// of sort's and topk's values: zeros with extent n along `axis`, dy added at `indices`.
#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "order.h"
#include "sort_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_scatter_along_axis(const InferArgs& args) {
  const TensorSpec& dy = args.inputs[0];
  const TensorSpec& index = args.inputs[1];
  const ScatterAlongAxisAttrs a = ScatterAlongAxisAttrs::from(args.attrs);
  JANUS_CHECK(index.shape == dy.shape, ShapeError,
              "scatter_along_axis: indices have shape {}, expected dy's shape {}", index.shape,
              dy.shape);
  const RowLayout L = RowLayout::of("scatter_along_axis", dy.shape, a.axis);
  JANUS_CHECK(a.n >= 0, ValueError, "scatter_along_axis: n is {}, expected n >= 0", a.n);
  check_order_index_dtype("scatter_along_axis", index.dtype, a.n);
  Shape out = dy.shape;
  out[L.axis] = a.n;
  return {TensorSpec{out, dy.dtype, dy.device}};
}

void scatter_along_axis_cpu(const KernelArgs& args) {
  const NDArray& dy = args.in(0);
  const ScatterAlongAxisAttrs a = ScatterAlongAxisAttrs::from(args.attrs);
  const RowLayout S = RowLayout::of("scatter_along_axis", dy.shape(), a.axis);
  RowLayout D = S;
  D.n = a.n;
  dispatch_dtype(dy.dtype(), [&]<typename T>() {
    const T* src = dy.data<T>();
    T* out = args.out(0).data<T>();
    std::fill(out, out + args.out(0).size(), T{});
    dispatch_index_dtype(args.in(1).dtype(), [&]<typename I>() {
      const I* idx = args.in(1).data<I>();
      check_positions("scatter_along_axis", idx, args.in(1).size(), a.n);
      // A row's positions may repeat (any index array): each row is one thread's.
      parallel_for(
          S.rows(), args.ctx,
          [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
              for (int64_t j = 0; j < S.n; ++j) {
                const int64_t p = wrap_position(idx[S.at(r, j)], a.n);
                T& dst = out[D.at(r, p)];
                dst = static_cast<T>(dst + src[S.at(r, j)]);
              }
            }
          },
          S.n);
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "scatter_along_axis",
    .doc = "Zeros with extent n along `axis` and dy's other extents, dy[..., j, ...] added at "
           "position indices[..., j, ...] of the axis (in [-n, n)): the gradient of sort's, topk's "
           "and "
           "take_along_axis's values.",
    .inputs = {"dy", "indices"},
    .outputs = {"dx"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis of the positions, negative from the end"},
              {"n", AttrType::kInt, std::nullopt, "extent of the result along the axis"}},
    .attr_fields = attr_fields<ScatterAlongAxisAttrs>(),
    .infer = infer_scatter_along_axis,
    .kernels = {{DeviceType::kCPU, scatter_along_axis_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      const ScatterAlongAxisAttrs a = ScatterAlongAxisAttrs::from(g.attrs);
      return {take_along_axis(g.dy(0), g.x(1), a.axis), NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray scatter_along_axis(const NDArray& dy, const NDArray& indices, int64_t axis, int64_t n) {
  static const ops::OpDef& op = ops::get_op("scatter_along_axis");
  return ops::invoke(op, {dy, indices}, {axis, n})[0];
}
}  // namespace janus
