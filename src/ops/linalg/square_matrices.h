// What the matrix operators (inverse, slogdet, cholesky and the decompositions) share: the
// checks of a stack of matrices [..., m, n] or square ones, their outputs' specs, and a loop over
// a stack's square matrices in double precision. Private to
// src/ops.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "janus/ops/registry.h"

namespace janus::ops {

/// Throws unless `a` is a float32 or float64 stack of square matrices [..., n, n].
void check_square_matrices(std::string_view op, const TensorSpec& a);

/// Throws unless `a` is a float32 or float64 stack of matrices [..., m, n].
void check_matrices(std::string_view op, const TensorSpec& a);

/// The batch shape of a stack [..., n, n]: its leading axes.
Shape batch_shape(const Shape& stack);

/// A stack with the batch, dtype and device of the stack `a` and the extents `tail` after the
/// batch: [..., tail...] (the outputs of a decomposition of a).
TensorSpec with_batch_of(const TensorSpec& a, std::initializer_list<int64_t> tail);

/// Each matrix of a stack transposed: its last two axes swapped.
NDArray matrix_transpose(const NDArray& stack);

/// Calls f(index, matrix) for each n x n matrix of `a` ([..., n, n], float32 or float64), the
/// matrix converted to a row-major vector of doubles that f may overwrite; then, when `out` is
/// defined ([..., n, n] of a's dtype), stores the matrix that f left into it.
template <typename F>
void for_each_matrix(const NDArray& a, const NDArray& out, F&& f) {
  const int64_t n = a.shape()[a.ndim() - 1];
  const auto n2 = static_cast<size_t>(n * n);
  int64_t count = 1;  // the matrices, also when they are empty (n = 0)
  for (int i = 0; i + 2 < a.ndim(); ++i) count *= a.shape()[i];
  std::vector<double> m(n2);
  auto run = [&]<typename T>() {
    const T* in = a.data<T>();
    T* o = out.defined() ? out.data<T>() : nullptr;
    for (int64_t b = 0; b < count; ++b) {
      std::copy_n(in + b * static_cast<int64_t>(n2), n2, m.begin());
      f(b, m);
      if (o != nullptr) {
        std::transform(m.begin(), m.end(), o + b * static_cast<int64_t>(n2),
                       [](double v) { return static_cast<T>(v); });
      }
    }
  };
  if (a.dtype() == DType::kFloat64) {
    run.template operator()<double>();
  } else {
    run.template operator()<float>();
  }
}

}  // namespace janus::ops
