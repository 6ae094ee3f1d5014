// Operator API of the unary family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

// Every dtype (integers wrap like C++ unsigned arithmetic would for negative of uint8).
NDArray negative(const NDArray& x);
NDArray abs(const NDArray& x);
NDArray square(const NDArray& x);
/// -1, 0 or 1 (nan stays nan); not differentiable.
NDArray sign(const NDArray& x);
/// max(x, 0).
NDArray relu(const NDArray& x);
/// min(max(x, a_min), a_max); the gradient passes where a_min < x < a_max.
NDArray clip(const NDArray& x, double a_min, double a_max);
/// x converted to `dtype` (float -> int truncates toward zero and saturates; nan gives 0).
/// The gradient is cast back to x's dtype.
NDArray cast(const NDArray& x, DType dtype);

// Floating dtypes only (TypeError naming the operator and dtype otherwise).
NDArray exp(const NDArray& x);
/// Natural logarithm; nan below 0, -inf at 0.
NDArray log(const NDArray& x);
/// log(1 + x), accurate near 0.
NDArray log1p(const NDArray& x);
NDArray sqrt(const NDArray& x);
/// 1 / sqrt(x).
NDArray rsqrt(const NDArray& x);
NDArray sin(const NDArray& x);
NDArray cos(const NDArray& x);
NDArray tanh(const NDArray& x);
/// The Gauss error function.
NDArray erf(const NDArray& x);
/// 1 / (1 + exp(-x)).
NDArray sigmoid(const NDArray& x);
/// x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))) (the exact form, not the tanh approximation).
NDArray gelu(const NDArray& x);
/// log(1 + exp(x)), computed without overflow.
NDArray softplus(const NDArray& x);
/// x for x > 0, alpha * x otherwise.
NDArray leaky_relu(const NDArray& x, double alpha = 0.01);

}  // namespace janus
