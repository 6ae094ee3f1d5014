// Operator API of the linalg family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

/// NumPy's matmul of op(a) and op(b), op swapping the last two axes when asked: operands of
/// rank >= 3 are stacks of matrices whose leading (batch) axes broadcast; a 1-D a is a row
/// [1, K] and a 1-D b a column [K, 1], the added axis removed from the result (1-D operands
/// cannot be transposed). float32 runs on oneDNN, float64 on plain loops.
NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a = false,
               bool transpose_b = false);

/// The inverse of each square matrix of a stack [..., n, n] (float32 or float64, computed in
/// double); a singular matrix is a ValueError at the wait.
NDArray linalg_inv(const NDArray& a);

/// {sign, log |det|} of each square matrix of a stack [..., n, n], each of shape [...]: sign 0
/// and log |det| -inf for a singular matrix, as NumPy's slogdet.
std::pair<NDArray, NDArray> linalg_slogdet(const NDArray& a);

/// The lower Cholesky factor L (L Lᵀ = A) of each symmetric positive-definite matrix of a stack
/// [..., n, n], read from A's lower triangle; otherwise a ValueError at the wait.
NDArray linalg_cholesky(const NDArray& a);

/// {w, v}: the eigenvalues [..., n] (ascending) and eigenvectors [..., n, n] (as columns, each
/// with its largest component positive) of each symmetric matrix of a stack [..., n, n], read
/// from its lower triangle; entries that are not finite are a ValueError at the wait.
std::pair<NDArray, NDArray> linalg_eigh(const NDArray& a);

/// {u, s, vt}: the reduced singular value decomposition A = U diag(s) Vᵀ of each matrix of a
/// stack [..., m, n], k = min(m, n): u [..., m, k], s [..., k] descending, vt [..., k, n], each
/// right singular vector's largest component positive; entries that are not finite are a
/// ValueError at the wait. `full_matrices`: u [..., m, m] and vt [..., n, n], completed to
/// orthonormal bases (then differentiable only for square matrices).
std::tuple<NDArray, NDArray, NDArray> linalg_svd(const NDArray& a, bool full_matrices = false);

/// {q, r}: the QR decomposition A = Q R of each matrix of a stack [..., m, n] (Householder, in
/// double), R's diagonal nonnegative: reduced q [..., m, k] and r [..., k, n], k = min(m, n), or
/// with `complete` q [..., m, m] and r [..., m, n] (then differentiable only when m <= n).
std::pair<NDArray, NDArray> linalg_qr(const NDArray& a, bool complete = false);

}  // namespace janus
