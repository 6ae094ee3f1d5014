"""``np.linalg``: norms, and the square-matrix functions over Janus's linalg operators
(linalg_inv, linalg_slogdet, linalg_cholesky, computed in double precision), so that autograd
and hybridize see them. ``solve`` and ``tensorsolve`` multiply by the inverse: exact for the
well-conditioned systems of a model, less accurate than LAPACK's factorisation for
ill-conditioned ones. Decompositions by iteration (``svd``, ``eig``/``eigh``, ``qr``, ``pinv``,
``lstsq``) are not there."""
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
