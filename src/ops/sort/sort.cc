// sort(x, axis, descending): x's elements in order along one axis (order.h).
#include "janus/ops/sort.h"

#include "janus/ops/ops.h"

#include "order.h"
#include "sort_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_sort(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  RowLayout::of("sort", x.shape, SortAttrs::from(args.attrs).axis);
  return {x};
}

void sort_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const SortAttrs a = SortAttrs::from(args.attrs);
  const RowLayout L = RowLayout::of("sort", x.shape(), a.axis);
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    T* out = args.out(0).data<T>();
    for_each_ordered_row(in, L, L.n, a.descending, args.ctx, [&](int64_t r, const int64_t* idx) {
      for (int64_t j = 0; j < L.n; ++j) out[L.at(r, j)] = in[L.at(r, idx[j])];
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "sort",
    .doc = "x's elements in order along `axis`: ascending with NaN last (NumPy's order), or "
           "descending with NaN first; equal elements keep their order (stable).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to sort along, negative from the end"},
              {"descending", AttrType::kBool, false, "largest first"}},
    .attr_fields = attr_fields<SortAttrs>(),
    .infer = infer_sort,
    .kernels = {{DeviceType::kCPU, sort_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // y[j] = x[idx[j]]: dy[j] goes back to position idx[j]. The positions are not kept by the
      // forward call (np.sort returns values only), so the rule orders x again.
      const SortAttrs a = SortAttrs::from(g.attrs);
      const RowLayout L = RowLayout::of("sort", g.x(0).shape(), a.axis);
      const NDArray idx = argsort(g.x(0), L.axis, a.descending, DType::kInt64);
      return {scatter_along_axis(g.dy(0), idx, L.axis, L.n)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray sort(const NDArray& x, int64_t axis, bool descending) {
  static const ops::OpDef& op = ops::get_op("sort");
  return ops::invoke(op, {x}, {axis, descending})[0];
}
}  // namespace janus
