"""``np.linalg``: norms, the square-matrix functions and the symmetric eigen- and singular value
decompositions over Janus's linalg operators (linalg_inv, linalg_slogdet, linalg_cholesky,
linalg_eigh, linalg_svd, linalg_qr, computed in double precision), so that autograd and
hybridize see them; ``pinv``, ``lstsq`` and ``matrix_rank`` are composed of the SVD. ``solve``
and ``tensorsolve`` multiply by the inverse: exact for the well-conditioned systems of a model,
less accurate than LAPACK's factorisation for ill-conditioned ones. ``eig`` and ``eigvals``
(general matrices, complex results) are not there."""
from .. import _janus


def norm(x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro"):
        raise NotImplementedError(f"norm: ord={ord!r} is not supported, expected None or 2")
    return _janus.norm(x, axis, keepdims)


def _square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"linalg.{name}: input has shape {a.shape}, expected square matrices "
                         "(..., n, n)")


def inv(a):
    """The inverse of each matrix of a stack (..., n, n); a singular matrix raises ValueError
    when the result is waited on."""
    _square("inv", a)
    return _janus.invoke("linalg_inv", [a], {})[0]


def slogdet(a):
    """(sign, log |det|) of each matrix of a stack (..., n, n): sign 0 and -inf when singular."""
    _square("slogdet", a)
    sign, logabsdet = _janus.invoke("linalg_slogdet", [a], {})
    return sign, logabsdet


def det(a):
    """The determinant of each matrix of a stack (..., n, n), as sign * exp(log |det|)."""
    sign, logabsdet = slogdet(a)
    from . import exp
    return sign * exp(logabsdet)


def cholesky(a):
    """The lower factor L with L L^T = a, for each symmetric positive-definite matrix of a stack
    (..., n, n), read from a's lower triangle."""
    _square("cholesky", a)
    return _janus.invoke("linalg_cholesky", [a], {})[0]


def solve(a, b):
    """x with a x = b: a (..., n, n), b (..., n) or (..., n, k), as NumPy's."""
    _square("solve", a)
    from . import matmul
    n = a.shape[-1]
    vector = b.ndim == a.ndim - 1
    if (b.shape[-1] if vector else b.shape[-2]) != n:
        raise ValueError(f"linalg.solve: a has shape {a.shape} and b {b.shape}, expected b of "
                         f"shape (..., {n}) or (..., {n}, k)")
    if vector:
        return matmul(inv(a), b.reshape(b.shape + (1,))).reshape(b.shape)
    return matmul(inv(a), b)


def _prod(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def tensorinv(a, ind=2):
    """The inverse of a as a tensor of the first `ind` axes onto the rest (NumPy's tensorinv)."""
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind is {ind}, expected a positive number")
    out_dims, in_dims = a.shape[:ind], a.shape[ind:]
    if _prod(out_dims) != _prod(in_dims):
        raise ValueError(f"linalg.tensorinv: a has shape {a.shape}, whose first {ind} axes "
                         f"({_prod(out_dims)} elements) and the rest ({_prod(in_dims)}) differ, "
                         "expected equal products")
    n = _prod(out_dims)
    return inv(a.reshape((n, n))).reshape(tuple(in_dims) + tuple(out_dims))


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b (NumPy's tensorsolve)."""
    if axes is not None:
        from . import moveaxis
        for k in sorted(axes, reverse=True):
            a = moveaxis(a, k, a.ndim - 1)
    x_dims = a.shape[b.ndim:]
    if _prod(a.shape[:b.ndim]) != _prod(x_dims) or tuple(a.shape[:b.ndim]) != tuple(b.shape):
        raise ValueError(f"linalg.tensorsolve: a has shape {a.shape} and b {b.shape}, expected "
                         "a's leading axes equal to b's shape and as many elements after them")
    n = _prod(x_dims)
    return solve(a.reshape((n, n)), b.reshape((n,))).reshape(tuple(x_dims))


def _matrices(name, a):
    if a.ndim < 2:
        raise ValueError(f"linalg.{name}: input has shape {a.shape}, expected matrices "
                         "(..., m, n)")


def _lower(name, a, UPLO):
    """``a`` with the triangle that ``UPLO`` names moved to the lower one (the operators read
    that one)."""
    _square(name, a)
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.{name}: UPLO is {UPLO!r}, expected 'L' or 'U'")
    from . import swapaxes
    return a if UPLO == "L" else swapaxes(a, -1, -2)


def eigh(a, UPLO="L"):
    """(w, v): the eigenvalues (ascending) and eigenvectors (columns of v) of each symmetric
    matrix of a stack (..., n, n), read from its lower (UPLO='L') or upper triangle. Each
    eigenvector's largest component is positive (LAPACK leaves the sign free)."""
    return _eigh("eigh", a, UPLO)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending) of each symmetric matrix of a stack (..., n, n)."""
    return _eigh("eigvalsh", a, UPLO)[0]


def _eigh(name, a, UPLO):
    w, v = _janus.invoke("linalg_eigh", [_lower(name, a, UPLO)], {})
    return w, v


def svd(a, full_matrices=False, compute_uv=True, hermitian=False):
    """(u, s, vh) with a = u @ diag(s) @ vh for each matrix of a stack (..., m, n), singular
    values descending. As MXNet 1.x, the factors are the reduced ones by default (u (..., m, k),
    vh (..., k, n), k = min(m, n)); ``full_matrices=True`` completes them to (..., m, m) and
    (..., n, n) as NumPy's default. Each right singular vector's largest component is
    positive. ``compute_uv=False``: s only."""
    _matrices("svd", a)
    if hermitian:
        raise NotImplementedError("linalg.svd: hermitian=True is not supported, expected False")
    u, s, vh = _janus.invoke("linalg_svd", [a], {"full_matrices": bool(full_matrices)})
    return (u, s, vh) if compute_uv else s


def qr(a, mode="reduced"):
    """(q, r) with a = q @ r for each matrix of a stack (..., m, n), r upper triangular with a
    nonnegative diagonal (LAPACK leaves the signs free): 'reduced' q (..., m, k) and r (..., k, n),
    k = min(m, n); 'complete' q (..., m, m) and r (..., m, n); 'r' r only (reduced)."""
    _matrices("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode is {mode!r}, expected 'reduced', 'complete' or 'r'")
    q, r = _janus.invoke("linalg_qr", [a], {"complete": mode == "complete"})
    return r if mode == "r" else (q, r)


def _eps(dtype):
    import numpy as _onp
    return float(_onp.finfo(_onp.dtype(dtype)).eps)


def _kept(s, rcond):
    """Which singular values are above rcond times the largest, per matrix (1.0 or 0.0): a
    constant for autograd."""
    from . import expand_dims
    s = _janus.invoke("stop_gradient", [s], {})[0].detach()  # hybridize keeps the operator
    largest = s.max(axis=-1) if s.shape[-1] else s.sum(axis=-1)
    return (s > expand_dims(largest * rcond, -1)).astype(s.dtype)


def pinv(a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse (..., n, m) of each matrix of a stack (..., m, n): the
    singular values at most rcond times the largest are taken as zero."""
    _matrices("pinv", a)
    if hermitian:
        raise NotImplementedError("linalg.pinv: hermitian=True is not supported, expected False")
    u, s, vh = svd(a)
    return _pinv_from(u, s, vh, _kept(s, rcond))


def _pinv_from(u, s, vh, kept):
    """V diag(1 / s) Uᵀ over the singular values that ``kept`` marks (1.0), zero for the
    others."""
    from . import expand_dims, matmul, swapaxes
    inverse = kept / (s + (1 - kept))  # 1 / s where kept, 0 elsewhere, never a division by 0
    return matmul(swapaxes(vh, -1, -2), expand_dims(inverse, -1) * swapaxes(u, -1, -2))


def matrix_rank(A, tol=None, hermitian=False):
    """The number of singular values above ``tol`` (default: the largest times max(m, n) times
    the dtype's epsilon), per matrix; 0 or 1 for a vector (nonzero or not)."""
    if hermitian:
        raise NotImplementedError("linalg.matrix_rank: hermitian=True is not supported, "
                                  "expected False")
    if A.ndim < 2:
        from . import any as _any
        return _any(A != 0).astype("int64")
    s = svd(A, compute_uv=False)
    above = _kept(s, max(A.shape[-2:]) * _eps(A.dtype)) if tol is None else (s > tol)
    return above.astype("int64").sum(axis=-1)


def lstsq(a, b, rcond="warn"):
    """(x, residuals, rank, s): the least-squares solution of a x = b (a (m, n), b (m,) or
    (m, k)) through the pseudo-inverse, as NumPy's: residuals are the squared norms of b - a x
    per column when a has full column rank n < m, else empty; rcond 'warn' or None is the
    dtype's epsilon times max(m, n)."""
    if a.ndim != 2:
        raise ValueError(f"linalg.lstsq: a has shape {a.shape}, expected a matrix (m, n)")
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise ValueError(f"linalg.lstsq: a has shape {a.shape} and b {b.shape}, expected b of "
                         f"shape ({m},) or ({m}, k)")
    if rcond in ("warn", None):
        rcond = _eps(a.dtype) * max(m, n)
    from . import matmul, zeros
    u, s, vh = svd(a)
    kept = _kept(s, rcond)
    x = matmul(_pinv_from(u, s, vh, kept), b)
    rank = kept.sum().astype("int64")
    if int(rank.item()) == n and m > n:
        r = b - matmul(a, x)
        residuals = (r * r).sum(axis=0)
        if b.ndim == 1:
            residuals = residuals.reshape((1,))
    else:
        residuals = zeros((0,), dtype=a.dtype, ctx=a.ctx)
    return x, residuals, rank, s
