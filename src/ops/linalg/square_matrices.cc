#include "square_matrices.h"

#include <utility>

#include "janus/base/error.h"
#include "janus/ops/shape.h"

namespace janus::ops {

void check_square_matrices(std::string_view op, const TensorSpec& a) {
  JANUS_CHECK(a.shape.ndim() >= 2 && a.shape[a.shape.ndim() - 1] == a.shape[a.shape.ndim() - 2],
              ShapeError, "{}: input has shape {}, expected square matrices [..., n, n]", op,
              a.shape);
  JANUS_CHECK(a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", op, a.dtype);
}

void check_matrices(std::string_view op, const TensorSpec& a) {
  JANUS_CHECK(a.shape.ndim() >= 2, ShapeError,
              "{}: input has shape {}, expected matrices [..., "
              "m, n]",
              op, a.shape);
  JANUS_CHECK(a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", op, a.dtype);
}

TensorSpec with_batch_of(const TensorSpec& a, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims;
  for (int i = 0; i + 2 < a.shape.ndim(); ++i) dims.push_back(a.shape[i]);
  dims.insert(dims.end(), tail);
  return TensorSpec{Shape(std::move(dims)), a.dtype, a.device};
}

Shape batch_shape(const Shape& stack) {
  std::vector<int64_t> dims;
  for (int i = 0; i + 2 < stack.ndim(); ++i) dims.push_back(stack[i]);
  return Shape(std::move(dims));
}

NDArray matrix_transpose(const NDArray& stack) {
  std::vector<int64_t> perm(static_cast<size_t>(stack.ndim()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(stack, std::move(perm));
}

}  // namespace janus::ops
