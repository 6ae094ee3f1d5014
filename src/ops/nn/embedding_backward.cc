// embedding_backward(indices, dy, num_embeddings): the weight gradient of embedding, a
// scatter-add of the rows of dy into a [V, D] array of zeros.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

template <typename I, typename T>
void scatter_add_rows(const I* idx, const T* dy, T* dw, int64_t n, int64_t v, int64_t d) {
  std::fill_n(dw, v * d, T(0));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = static_cast<int64_t>(idx[i]);
    JANUS_CHECK(row >= 0 && row < v, IndexError,
                "embedding_backward: index {} at position {} is out of range, expected 0 <= index "
                "< {}",
                row, i, v);
    for (int64_t j = 0; j < d; ++j) dw[row * d + j] += dy[i * d + j];
  }
}

void embedding_backward_cpu(const KernelArgs& args) {
  const NDArray& idx = args.in(0);
  const NDArray& dw = args.out(0);
  const int64_t v = dw.shape()[0], d = dw.shape()[1];
  auto run = [&]<typename T>() {
    if (idx.dtype() == DType::kInt32) {
      scatter_add_rows(idx.data<int32_t>(), args.in(1).data<T>(), dw.data<T>(), idx.size(), v, d);
    } else {
      scatter_add_rows(idx.data<int64_t>(), args.in(1).data<T>(), dw.data<T>(), idx.size(), v, d);
    }
  };
  if (dw.dtype() == DType::kFloat64) {
    run.operator()<double>();
  } else {
    run.operator()<float>();
  }
}

std::vector<TensorSpec> infer_embedding_backward(const InferArgs& args) {
  const TensorSpec& idx = args.inputs[0];
  const TensorSpec& dy = args.inputs[1];
  const int64_t v = EmbeddingBackwardAttrs::from(args.attrs).num_embeddings;
  JANUS_CHECK(idx.dtype == DType::kInt32 || idx.dtype == DType::kInt64, TypeError,
              "embedding_backward: indices have dtype {}, expected int32 or int64", idx.dtype);
  JANUS_CHECK(dy.dtype == DType::kFloat32 || dy.dtype == DType::kFloat64, TypeError,
              "embedding_backward: dy has dtype {}, expected float32 or float64", dy.dtype);
  const bool fits = dy.shape.ndim() == idx.shape.ndim() + 1 &&
                    std::equal(idx.shape.begin(), idx.shape.end(), dy.shape.begin());
  JANUS_CHECK(fits, ShapeError,
              "embedding_backward: dy has shape {} for indices of shape {}, expected the indices' "
              "shape followed by the embedding dimension",
              dy.shape, idx.shape);
  JANUS_CHECK(v >= 0, ValueError, "embedding_backward: num_embeddings is {}, expected >= 0", v);
  return {TensorSpec{Shape{v, dy.shape[dy.shape.ndim() - 1]}, dy.dtype, dy.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "embedding_backward",
    .doc = "Scatter-add of the rows of dy (indices.shape + [D]) into zeros [num_embeddings, D]: "
           "the weight gradient of embedding.",
    .inputs = {"indices", "dy"},
    .outputs = {"dweight"},
    .attrs = {{"num_embeddings", AttrType::kInt, std::nullopt, "rows V of the result"}},
    .attr_fields = attr_fields<EmbeddingBackwardAttrs>(),
    .infer = infer_embedding_backward,
    .kernels = {{DeviceType::kCPU, embedding_backward_cpu}},
    // Linear in dy: its gradient gathers the rows back.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {NDArray(), embedding(g.x(0), g.dy(0))};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray embedding_backward(const NDArray& indices, const NDArray& dy, int64_t num_embeddings) {
  static const ops::OpDef& op = ops::get_op("embedding_backward");
  return ops::invoke(op, {indices, dy}, {num_embeddings})[0];
}
}  // namespace janus
