// scatter_add(x, indices, updates, axis): x with updates added at `indices` along `axis`; the
// adjoint of take.
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_scatter_add(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& index = args.inputs[1];
  const TensorSpec& updates = args.inputs[2];
  check_index_dtype("scatter_add", "indices", index.dtype);
  JANUS_CHECK(x.dtype == updates.dtype, TypeError,
              "scatter_add: x has dtype {} and updates {}, expected one dtype", x.dtype,
              updates.dtype);
  JANUS_CHECK(x.shape.ndim() >= 1, ShapeError,
              "scatter_add: x has 0 dimensions, expected at least 1");
  const int axis = normalize_axis("scatter_add", AxisAttrs::from(args.attrs).axis, x.shape.ndim());
  std::vector<int64_t> dims(x.shape.begin(), x.shape.begin() + axis);
  dims.insert(dims.end(), index.shape.begin(), index.shape.end());
  dims.insert(dims.end(), x.shape.begin() + axis + 1, x.shape.end());
  const Shape expected(std::move(dims));
  JANUS_CHECK(updates.shape == expected, ShapeError,
              "scatter_add: updates have shape {}, expected {} (x.shape[:axis] + indices.shape + "
              "x.shape[axis+1:] for x {}, indices {}, axis {})",
              updates.shape, expected, x.shape, index.shape, axis);
  return {x};
}

void scatter_add_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const Shape& s = x.shape();
  const int axis = normalize_axis("scatter_add", AxisAttrs::from(args.attrs).axis, s.ndim());
  const std::vector<int64_t> index = read_indices("scatter_add", args.in(1), s[axis]);
  const int64_t n = s[axis], inner = extent_product(s, axis + 1, s.ndim());
  const int64_t m = static_cast<int64_t>(index.size());
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    const T* upd = args.in(2).data<T>();
    T* out = args.out(0).data<T>();
    if (out != in) std::copy(in, in + x.size(), out);
    // Repeated indices collide within one outer block only, so blocks run in parallel.
    parallel_for(extent_product(s, 0, axis), args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        for (int64_t j = 0; j < m; ++j) {
          T* dst = out + (o * n + index[static_cast<size_t>(j)]) * inner;
          const T* src = upd + (o * m + j) * inner;
          for (int64_t i = 0; i < inner; ++i) dst[i] = static_cast<T>(dst[i] + src[i]);
        }
      }
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "scatter_add",
    .doc = "x with `updates` added at int32/int64 `indices` along `axis` (repeats accumulate).\n\n"
           "updates.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:], as take's output; "
           "an out-of-range index raises IndexError when the result is read.",
    .inputs = {"x", "indices", "updates"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{0}, "axis to scatter along, negative from the end"}},
    .attr_fields = attr_fields<AxisAttrs>(),
    .infer = infer_scatter_add,
    .kernels = {{DeviceType::kCPU, scatter_add_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // dy: x's shape -> itself for x, gathered at the indices for updates.
      return {g.dy(0), NDArray(), take(g.dy(0), g.x(1), AxisAttrs::from(g.attrs).axis)};
    },
    .inplace_input = 0,
});

}  // namespace janus::ops

namespace janus {
NDArray scatter_add(const NDArray& x, const NDArray& indices, const NDArray& updates,
                    int64_t axis) {
  static const ops::OpDef& op = ops::get_op("scatter_add");
  return ops::invoke(op, {x, indices, updates}, {axis})[0];
}
}  // namespace janus
