// take(x, indices, axis): the entries of x at `indices` along `axis` (NumPy's take).
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_take(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& index = args.inputs[1];
  check_index_dtype("take", "indices", index.dtype);
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError, "take: input has 0 dimensions, expected at least 1");
  const int axis = normalize_axis("take", AxisAttrs::from(args.attrs).axis, x.shape.ndim());
  // y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]
  std::vector<int64_t> dims(x.shape.begin(), x.shape.begin() + axis);
  dims.insert(dims.end(), index.shape.begin(), index.shape.end());
  dims.insert(dims.end(), x.shape.begin() + axis + 1, x.shape.end());
  return {TensorSpec{Shape(std::move(dims)), x.dtype, x.device}};
}

void take_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const Shape& s = x.shape();
  const int axis = normalize_axis("take", AxisAttrs::from(args.attrs).axis, s.ndim());
  const std::vector<int64_t> index = read_indices("take", args.in(1), s[axis]);
  const int64_t n = s[axis], inner = extent_product(s, axis + 1, s.ndim());
  const int64_t m = static_cast<int64_t>(index.size());
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    T* out = args.out(0).data<T>();
    parallel_for(extent_product(s, 0, axis) * m, args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {  // r = (outer o, position j)
        const T* src = in + ((r / m) * n + index[static_cast<size_t>(r % m)]) * inner;
        std::copy(src, src + inner, out + r * inner);
      }
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "take",
    .doc = "Entries of x at int32/int64 `indices` (in [-extent, extent)) along `axis`.\n\n"
           "y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]. An out-of-range index "
           "raises IndexError when the result is read.",
    .inputs = {"x", "indices"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{0}, "axis to gather along, negative from the end"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_take,
    .kernels = {{DeviceType::kCPU, take_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: gathered rows -> added back at their indices (repeats accumulate); none for indices.
      const NDArray& x = g.x(0);
      return {scatter_add(zeros(x.shape(), x.dtype(), x.device()), g.x(1), g.dy(0),
                          AxisAttrs::from(g.attrs).axis),
              NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray take(const NDArray& x, const NDArray& indices, int64_t axis) {
  static const ops::OpDef& op = ops::get_op("take");
  return ops::invoke(op, {x, indices}, {axis})[0];
}
}  // namespace janus
