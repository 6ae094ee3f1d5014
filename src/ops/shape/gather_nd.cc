// gather_nd(x, indices): the entries of x at M-tuples of positions, the tuples down indices'
// first axis (MXNet's gather_nd; ONNX's GatherND with that axis last).
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "layout.h"

namespace janus::ops {
namespace {

// indices (M, Y...) picks x[i_0, ..., i_{M-1}] (each of shape x.shape[M:]) for every Y.
struct GatherNdGeometry {
  int m = 0;           // positions per tuple
  int64_t tuples = 1;  // prod(Y)
  int64_t inner = 1;   // prod(x.shape[M:])
};

GatherNdGeometry gather_nd_geometry(const Shape& x, const Shape& indices) {
  JANUS_CHECK(indices.ndim() >= 1, ShapeError,
              "gather_nd: indices have 0 dimensions, expected at least 1 (positions down the "
              "first axis)");
  JANUS_CHECK(indices[0] >= 1 && indices[0] <= x.ndim(), ShapeError,
              "gather_nd: indices of shape {} hold {} positions per tuple (their first extent), "
              "expected 1 to {} for x of shape {}",
              indices, indices[0], x.ndim(), x);
  GatherNdGeometry g;
  g.m = static_cast<int>(indices[0]);
  g.tuples = extent_product(indices, 1, indices.ndim());
  g.inner = extent_product(x, g.m, x.ndim());
  return g;
}

std::vector<TensorSpec> infer_gather_nd(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& indices = args.inputs[1];
  check_index_dtype("gather_nd", "indices", indices.dtype);
  const GatherNdGeometry g = gather_nd_geometry(x.shape, indices.shape);
  // y.shape = indices.shape[1:] + x.shape[M:]
  std::vector<int64_t> dims(indices.shape.begin() + 1, indices.shape.end());
  dims.insert(dims.end(), x.shape.begin() + g.m, x.shape.end());
  return {TensorSpec{Shape(std::move(dims)), x.dtype, x.device}};
}

// The row of x (in units of `inner` elements) that each tuple picks; throws IndexError naming
// the tuple and the axis for a position outside [-extent, extent).
std::vector<int64_t> tuple_rows(const NDArray& indices, const Shape& x, const GatherNdGeometry& g) {
  std::vector<int64_t> rows(static_cast<size_t>(g.tuples), 0);
  auto read = [&]<typename I>(const I* p) {
    for (int a = 0; a < g.m; ++a) {
      const int64_t extent = x[a];
      for (int64_t t = 0; t < g.tuples; ++t) {
        const int64_t v = static_cast<int64_t>(p[a * g.tuples + t]);
        JANUS_CHECK(v >= -extent && v < extent, IndexError,
                    "gather_nd: position {} of tuple {} is out of range for axis {} of extent {}, "
                    "expected in [{}, {})",
                    v, t, a, extent, -extent, extent);
        auto& row = rows[static_cast<size_t>(t)];
        row = row * extent + (v < 0 ? v + extent : v);
      }
    }
  };
  if (indices.dtype() == DType::kInt32) {
    read(indices.data<int32_t>());
  } else {
    read(indices.data<int64_t>());
  }
  return rows;
}

void gather_nd_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const GatherNdGeometry g = gather_nd_geometry(x.shape(), args.in(1).shape());
  const std::vector<int64_t> rows = tuple_rows(args.in(1), x.shape(), g);
  const size_t row_bytes = static_cast<size_t>(g.inner) * dtype_size(x.dtype());
  if (row_bytes == 0) return;
  const auto* in = static_cast<const char*>(x.raw_data());
  auto* out = static_cast<char*>(args.out(0).raw_data());
  parallel_for(g.tuples, args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      std::memcpy(out + static_cast<size_t>(t) * row_bytes,
                  in + static_cast<size_t>(rows[static_cast<size_t>(t)]) * row_bytes, row_bytes);
    }
  });
}

// dx: dy's rows added into x's rows at the tuples' positions (repeats accumulate), as
// scatter_add along the first axis of x seen as (prod(x.shape[:M]), x.shape[M:]...). The rows
// are sum_a wrap(i_a) * stride_a with wrap = mod(i, extent), built from operators so that the
// gradient is differentiable again.
NDArray gather_nd_grad_x(const NDArray& x, const NDArray& indices, const NDArray& dy) {
  const GatherNdGeometry g = gather_nd_geometry(x.shape(), indices.shape());
  const DType it = indices.dtype();
  std::vector<int64_t> extents, strides;
  int64_t lead = 1;
  for (int a = g.m - 1; a >= 0; --a) {
    strides.insert(strides.begin(), lead);
    lead *= x.shape()[a];
  }
  for (int a = 0; a < g.m; ++a) extents.push_back(x.shape()[a]);
  std::vector<int64_t> column(static_cast<size_t>(indices.ndim()), 1);
  column[0] = g.m;
  auto as_column = [&](const std::vector<int64_t>& v) {
    return from_vector<int64_t>(v, Shape(column), it, indices.device());
  };
  const NDArray wrapped = mod(indices, as_column(extents));
  const NDArray rows = sum(wrapped * as_column(strides), {0});
  std::vector<int64_t> flat{lead};
  flat.insert(flat.end(), x.shape().begin() + g.m, x.shape().end());
  const NDArray dx = scatter_add(zeros(Shape(flat), x.dtype(), x.device()), rows, dy, 0);
  return reshape(dx, x.shape());
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "gather_nd",
    .doc = "Entries of x at tuples of int32/int64 positions down the first axis of `indices` "
           "(MXNet's gather_nd).\n\n"
           "indices has shape (M, Y...) with 1 <= M <= x.ndim; y[j...] = x[indices[0, j...], ..., "
           "indices[M-1, j...]], so y.shape = indices.shape[1:] + x.shape[M:]. Positions in "
           "[-extent, extent); an out-of-range one raises IndexError when the result is read. "
           "Differentiable in x only.",
    .inputs = {"x", "indices"},
    .outputs = {"y"},
    .infer = infer_gather_nd,
    .kernels = {{DeviceType::kCPU, gather_nd_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {gather_nd_grad_x(g.x(0), g.x(1), g.dy(0)), NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray gather_nd(const NDArray& x, const NDArray& indices) {
  static const ops::OpDef& op = ops::get_op("gather_nd");
  return ops::invoke(op, {x, indices}, {})[0];
}
}  // namespace janus
