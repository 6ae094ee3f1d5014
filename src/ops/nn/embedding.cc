// embedding(indices, weight): rows of weight [V, D] gathered by integer indices.
#include <cstring>

#include "janus/ops/ops.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

template <typename I, typename T>
void gather_rows(const I* idx, const T* w, T* y, int64_t n, int64_t v, int64_t d) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = static_cast<int64_t>(idx[i]);
    JANUS_CHECK(row >= 0 && row < v, IndexError,
                "embedding: index {} at position {} is out of range, expected 0 <= index < {} "
                "(the rows of weight)",
                row, i, v);
    std::memcpy(y + i * d, w + row * d, static_cast<size_t>(d) * sizeof(T));
  }
}

void embedding_cpu(const KernelArgs& args) {
  const NDArray& idx = args.in(0);
  const NDArray& w = args.in(1);
  const int64_t v = w.shape()[0], d = w.shape()[1];
  auto run = [&]<typename T>() {
    if (idx.dtype() == DType::kInt32) {
      gather_rows(idx.data<int32_t>(), w.data<T>(), args.out(0).data<T>(), idx.size(), v, d);
    } else {
      gather_rows(idx.data<int64_t>(), w.data<T>(), args.out(0).data<T>(), idx.size(), v, d);
    }
  };
  if (w.dtype() == DType::kFloat64) {
    run.operator()<double>();
  } else {
    run.operator()<float>();
  }
}

std::vector<TensorSpec> infer_embedding(const InferArgs& args) {
  const TensorSpec& idx = args.inputs[0];
  const TensorSpec& w = args.inputs[1];
  JANUS_CHECK(idx.dtype == DType::kInt32 || idx.dtype == DType::kInt64, TypeError,
              "embedding: indices have dtype {}, expected int32 or int64", idx.dtype);
  JANUS_CHECK(w.shape.ndim() == 2, ShapeError,
              "embedding: weight has shape {}, expected 2 dimensions [num_embeddings, dim]",
              w.shape);
  JANUS_CHECK(w.dtype == DType::kFloat32 || w.dtype == DType::kFloat64, TypeError,
              "embedding: weight has dtype {}, expected float32 or float64", w.dtype);
  std::vector<int64_t> dims = idx.shape.dims();
  dims.push_back(w.shape[1]);
  return {TensorSpec{Shape(std::move(dims)), w.dtype, w.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "embedding",
    .doc = "Rows weight[indices]: int32/int64 indices of any shape, weight [V, D] -> "
           "indices.shape + [D].",
    .inputs = {"indices", "weight"},
    .outputs = {"y"},
    .infer = infer_embedding,
    .kernels = {{DeviceType::kCPU, embedding_cpu}},
    // dy: indices.shape + [D] -> dweight [V, D] by adding each row of dy into its index's row.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {NDArray(), embedding_backward(g.x(0), g.dy(0), g.x(1).shape()[0])};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray embedding(const NDArray& indices, const NDArray& weight) {
  static const ops::OpDef& op = ops::get_op("embedding");
  return ops::invoke(op, {indices, weight})[0];
}
}  // namespace janus
