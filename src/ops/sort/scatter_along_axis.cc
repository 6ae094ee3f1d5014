// scatter_along_axis(dy, indices, axis, n): the gradient of a gather along one axis (sort's and
// topk's values): zeros with extent n along `axis`, dy added at the positions `indices`.
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
      // Checked before the parallel loop: an exception must not leave an OpenMP region.
      for (int64_t e = 0; e < args.in(1).size(); ++e) {
        const int64_t p = static_cast<int64_t>(idx[e]);
        JANUS_CHECK(p >= 0 && p < a.n && static_cast<I>(p) == idx[e], IndexError,
                    "scatter_along_axis: index {} at position {} is not a position of an axis of "
                    "extent {}, expected an integer in [0, {})",
                    static_cast<double>(idx[e]), e, a.n, a.n);
      }
      // A row's positions may repeat (any index array): each row is one thread's.
      parallel_for(
          S.rows(), args.ctx,
          [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
              for (int64_t j = 0; j < S.n; ++j) {
                const int64_t p = static_cast<int64_t>(idx[S.at(r, j)]);
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
           "position indices[..., j, ...] of the axis: the gradient of sort's and topk's values.",
    .inputs = {"dy", "indices"},
    .outputs = {"dx"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis of the positions, negative from the end"},
              {"n", AttrType::kInt, std::nullopt, "extent of the result along the axis"}},
    .attr_fields = attr_fields<ScatterAlongAxisAttrs>(),
    .infer = infer_scatter_along_axis,
    .kernels = {{DeviceType::kCPU, scatter_along_axis_cpu}},
    // Its own gradient would be a gather along the axis, which Janus has no operator for yet.
    .not_differentiable = true,
});

}  // namespace janus::ops

namespace janus {
NDArray scatter_along_axis(const NDArray& dy, const NDArray& indices, int64_t axis, int64_t n) {
  static const ops::OpDef& op = ops::get_op("scatter_along_axis");
  return ops::invoke(op, {dy, indices}, {axis, n})[0];
}
}  // namespace janus
