// Dropout, Flatten and Embedding.
#include <fmt/format.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

Dropout::Dropout(double rate) : Block("dropout"), rate_(rate) {
  JANUS_CHECK(rate >= 0 && rate < 1, ValueError, "Dropout: rate is {}, expected a value in [0, 1)",
              rate);
}

NDArray Dropout::forward(const NDArray& x) {
  if (!autograd::is_training() || rate_ == 0) return x;
  return dropout(x, rate_, true);
}

std::string Dropout::describe() const { return fmt::format("Dropout(p={})", rate_); }

Flatten::Flatten() : Block("flatten") {}

NDArray Flatten::forward(const NDArray& x) {
  JANUS_CHECK(x.ndim() >= 1, ShapeError, "{}: input has shape {}, expected at least 1 dimension",
              name(), x.shape());
  return x.ndim() == 2 ? x : flatten(x);
}

Embedding::Embedding(int64_t input_dim, int64_t output_dim, InitializerPtr weight_init)
    : Block("embedding"), input_dim_(input_dim), output_dim_(output_dim) {
  JANUS_CHECK(input_dim > 0 && output_dim > 0, ValueError,
              "Embedding: input_dim {} and output_dim {} must be positive", input_dim, output_dim);
  weight_ = register_param("weight", Shape{input_dim, output_dim}, std::move(weight_init));
}

NDArray Embedding::forward(const NDArray& x) {
  JANUS_CHECK(x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64, TypeError,
              "{}: indices have dtype {}, expected int32 or int64", name(), x.dtype());
  return embedding(x, weight_->data(x.device()));
}

std::string Embedding::describe() const {
  return fmt::format("Embedding({} -> {})", input_dim_, output_dim_);
}

}  // namespace janus::nn
