// Operator API of the linalg family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

/// NumPy's matmul of op(a) and op(b), op swapping the last two axes when asked: operands of
/// rank >= 3 are stacks of matrices whose leading (batch) axes broadcast; a 1-D a is a row
/// [1, K] and a 1-D b a column [K, 1], the added axis removed from the result (1-D operands
/// cannot be transposed). float32 runs on oneDNN, float64 on plain loops.
NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a = false,
               bool transpose_b = false);

}  // namespace janus
