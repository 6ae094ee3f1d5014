// argsort(x, axis, descending, dtype): the positions that sort x along one axis (order.h).
#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "order.h"
#include "sort_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_argsort(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const ArgsortAttrs a = ArgsortAttrs::from(args.attrs);
  const RowLayout L = RowLayout::of("argsort", x.shape, a.axis);
  check_order_index_dtype("argsort", a.dtype, L.n);
  return {TensorSpec{x.shape, a.dtype, x.device}};
}

void argsort_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const ArgsortAttrs a = ArgsortAttrs::from(args.attrs);
  const RowLayout L = RowLayout::of("argsort", x.shape(), a.axis);
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    dispatch_index_dtype(a.dtype, [&]<typename I>() {
      I* out = args.out(0).data<I>();
      for_each_ordered_row(x.data<T>(), L, L.n, a.descending, args.ctx,
                           [&](int64_t r, const int64_t* idx) {
                             for (int64_t j = 0; j < L.n; ++j) {
                               out[L.at(r, j)] = static_cast<I>(idx[j]);
                             }
                           });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "argsort",
    .doc = "The positions that sort x along `axis` (sort's order: NaN last ascending, first "
           "descending, ties by position).",
    .inputs = {"x"},
    .outputs = {"indices"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to sort along, negative from the end"},
              {"descending", AttrType::kBool, false, "largest first"},
              {"dtype", AttrType::kDType, DType::kInt64,
               "element type of the positions: int32, int64, float32 or float64"}},
    .attr_fields = attr_fields<ArgsortAttrs>(),
    .infer = infer_argsort,
    .kernels = {{DeviceType::kCPU, argsort_cpu}},
    .not_differentiable = true,  // positions, piecewise constant
});

}  // namespace janus::ops

namespace janus {
NDArray argsort(const NDArray& x, int64_t axis, bool descending, DType dtype) {
  static const ops::OpDef& op = ops::get_op("argsort");
  return ops::invoke(op, {x}, {axis, descending, dtype})[0];
}
}  // namespace janus
