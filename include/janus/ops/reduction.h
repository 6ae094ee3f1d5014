// Operator API of the reduction family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

// Each reduces over `axes` (every axis when empty; negative counted from the end, IndexError
// when out of range); keepdims keeps reduced axes with extent 1.

/// Arithmetic mean; an empty mean is NaN (integers: truncated, 0 when empty).
NDArray mean(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);
/// Largest element; NaN propagates. ValueError when a non-empty result reduces zero elements.
/// The gradient goes to the first largest element of each block.
NDArray max(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);
/// Smallest element; as max otherwise.
NDArray min(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);
/// Product (1 when empty); the gradient is exact at zeros.
NDArray prod(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);
/// L2 norm sqrt(sum x^2); `ord` must be 2 (NotImplementedError otherwise). Floating dtypes. The
/// gradient at a zero norm is 0.
NDArray norm(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false,
             int64_t ord = 2);
/// log(sum(exp(x))), computed stably (shifted by the maximum). Floating dtypes; -inf when
/// empty or all -inf.
NDArray logsumexp(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);

/// int64 index of the first largest element along `axis` (of the first NaN if any); not
/// differentiable. ValueError when the axis is empty and the result is not.
NDArray argmax(const NDArray& x, int64_t axis, bool keepdims = false);
/// int64 index of the first smallest element along `axis`; as argmax otherwise.
NDArray argmin(const NDArray& x, int64_t axis, bool keepdims = false);

}  // namespace janus
