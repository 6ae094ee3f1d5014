"""NumPy functions that d2l's MXNet edition uses, composed of Janus's operators (transpose,
reshape, broadcast_to, concatenation, comparisons, where, reductions): autograd records them and
hybridize traces them like any other call."""
import builtins as _builtins

from .. import _janus


def _np():
    from .. import numpy as np
    return np


def _axis(axis, ndim, name):
    if not -ndim <= axis < ndim:
        raise IndexError(f"{name}: axis {axis} is out of range for an array of {ndim} axes")
    return axis % ndim


def swapaxes(a, axis1, axis2):
    """``a`` with axes ``axis1`` and ``axis2`` exchanged."""
    order = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim, "swapaxes"), _axis(axis2, a.ndim, "swapaxes")
    order[i], order[j] = order[j], order[i]
    return a.transpose(order)


def ravel(a, order="C"):
    """``a`` as one axis, in row-major order."""
    if order != "C":
        raise NotImplementedError(f"ravel: order '{order}' is not supported, expected 'C'")
    return a.reshape(-1)


def flip(m, axis=None):
    """``m`` with the order of its elements reversed along ``axis`` (every axis when None)."""
    axes = range(m.ndim) if axis is None else (axis if isinstance(axis, (tuple, list))
                                               else (axis,))
    index = [slice(None)] * m.ndim
    for ax in axes:
        index[_axis(ax, m.ndim, "flip")] = slice(None, None, -1)
    return m[tuple(index)]


def repeat(a, repeats, axis=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (the flattened array when
    None); ``repeats`` is one integer."""
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 0:
        raise ValueError(f"repeat: repeats is {repeats!r}, expected one integer >= 0 (a "
                         "sequence of counts is not supported)")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim, "repeat")
    shape = list(a.shape)
    expanded = _janus.expand_dims(a, axis + 1)
    target = shape[:axis + 1] + [repeats] + shape[axis + 1:]
    shape[axis] *= repeats
    return _janus.broadcast_to(expanded, tuple(target)).reshape(tuple(shape))


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (NumPy's rules when the lengths differ)."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    if _builtins.any(not isinstance(r, int) or r < 0 for r in reps):
        raise ValueError(f"tile: reps is {reps!r}, expected integers >= 0")
    ndim = _builtins.max(A.ndim, len(reps))
    shape = (1,) * (ndim - A.ndim) + tuple(A.shape)
    reps = (1,) * (ndim - len(reps)) + reps
    # [s0, s1, ...] -> [1, s0, 1, s1, ...] -> [r0, s0, r1, s1, ...] -> [r0 s0, r1 s1, ...]
    interleaved = tuple(x for s in shape for x in (1, s))
    target = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    out = _janus.broadcast_to(A.reshape(interleaved), target)
    return out.reshape(tuple(r * s for r, s in zip(reps, shape)))


# Cumulative sums of at most this many elements are one product with a triangular matrix;
# longer ones go in blocks of it (the matrix holds _CUMSUM_BLOCK^2 elements).
_CUMSUM_BLOCK = 512


def _cumsum_last(x):
    """Cumulative sums along the last axis of float array ``x``."""
    np = _np()
    n = x.shape[-1]
    lead = tuple(x.shape[:-1])
    if n <= _CUMSUM_BLOCK:
        ones = np.ones((n, n), dtype=x.dtype, ctx=x.ctx)
        upper = np.where(_tri_mask(ones, 0, False), ones, np.zeros_like(ones))
        return np.matmul(x.reshape(-1, n), upper).reshape(x.shape)
    # Blocks of _CUMSUM_BLOCK: the sums within each block, plus the sum of the blocks before.
    b = _CUMSUM_BLOCK
    m = -(-n // b) * b
    padded = x if m == n else _janus.pad(x, [0, 0] * len(lead) + [0, m - n], 0.0)
    within = _cumsum_last(padded.reshape(lead + (m // b, b)))
    totals = _janus.slice_axis(within, len(lead) + 1, b - 1, b).reshape(lead + (m // b,))
    before = _cumsum_last(totals) - totals
    out = (within + before.reshape(lead + (m // b, 1))).reshape(lead + (m,))
    return out if m == n else _janus.slice_axis(out, len(lead), 0, n)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sums along ``axis`` (of the flattened array when None), as products with a
    triangular matrix of ones (in blocks for long axes), so that its gradient is the reverse
    cumulative sum. Integer arrays are summed in float64 (exact below 2^53) and cast back."""
    np = _np()
    if out is not None:
        raise NotImplementedError("cumsum: out= is not supported")
    x = a.reshape(-1) if axis is None else a
    axis = 0 if axis is None else _axis(axis, x.ndim, "cumsum")
    result_dtype = x.dtype if dtype is None else np.dtype(dtype)
    work = x.astype(result_dtype if result_dtype.kind == "f" else "float64")
    summed = np.moveaxis(_cumsum_last(np.moveaxis(work, axis, -1)), -1, axis)
    return summed if summed.dtype == result_dtype else summed.astype(result_dtype)


def outer(a, b):
    """The outer product of ``a`` and ``b``, each flattened."""
    return a.reshape(-1, 1) * b.reshape(1, -1)


def _tri_mask(m, k, lower):
    np = _np()
    rows, cols = m.shape[-2], m.shape[-1]
    i = np.arange(rows, ctx=m.ctx).reshape(rows, 1)
    j = np.arange(cols, ctx=m.ctx).reshape(1, cols)
    return (j <= i + k) if lower else (j >= i + k)


def tril(m, k=0):
    """``m`` with the elements above diagonal ``k`` zeroed (the last two axes)."""
    if m.ndim < 2:
        raise ValueError(f"tril: the array has {m.ndim} axes, expected at least 2")
    return _np().where(_tri_mask(m, k, True), m, _np().zeros_like(m))


def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` zeroed (the last two axes)."""
    if m.ndim < 2:
        raise ValueError(f"triu: the array has {m.ndim} axes, expected at least 2")
    return _np().where(_tri_mask(m, k, False), m, _np().zeros_like(m))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance: mean((a - mean(a))^2) over ``axis``, divided by N - ddof instead of N."""
    np = _np()
    if out is not None:
        raise NotImplementedError("var: out= is not supported")
    x = a if dtype is None else a.astype(dtype)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    sq = np.sum(centered * centered, axis=axis, keepdims=keepdims)
    n = x.size if axis is None else _count(x.shape, axis)
    return sq / _builtins.max(n - ddof, 0)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The standard deviation: sqrt(var)."""
    return _np().sqrt(var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


def _count(shape, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = 1
    for ax in axes:
        n *= shape[_axis(ax, len(shape), "var")]
    return n


def isnan(x):
    """True where ``x`` is NaN."""
    return x != x


def isinf(x):
    """True where ``x`` is +inf or -inf."""
    return _np().abs(x) == float("inf")


def isfinite(x):
    """True where ``x`` is neither NaN nor infinite."""
    return logical_not(logical_or(isnan(x), isinf(x)))


def _truth(x):
    np = _np()
    x = x if isinstance(x, np.ndarray) else np.array(x)
    return x if x.dtype == np.bool_ else x != 0


def logical_not(x):
    return _truth(x) == False  # noqa: E712 (an elementwise comparison, not a test)


def logical_and(x1, x2):
    return _truth(x1) * _truth(x2)


def logical_or(x1, x2):
    return logical_not(logical_not(x1) * logical_not(x2))


def logical_xor(x1, x2):
    return _truth(x1) != _truth(x2)


def any(a, axis=None, keepdims=False):
    """True where some element along ``axis`` is nonzero."""
    return _np().sum(_truth(a).astype("int64"), axis=axis, keepdims=keepdims) > 0


def all(a, axis=None, keepdims=False):
    """True where every element along ``axis`` is nonzero."""
    return _np().sum(logical_not(a).astype("int64"), axis=axis, keepdims=keepdims) == 0


def count_nonzero(a, axis=None, keepdims=False):
    return _np().sum(_truth(a).astype("int64"), axis=axis, keepdims=keepdims)


def atleast_1d(a):
    return a if a.ndim >= 1 else a.reshape(1)


def atleast_2d(a):
    return a if a.ndim >= 2 else a.reshape(1, -1)


def vstack(tup):
    """The arrays stacked as rows (1-D arrays become rows)."""
    return _np().concatenate([atleast_2d(a) for a in tup], axis=0)


def hstack(tup):
    """The arrays joined along their second axis (the first for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in tup]
    return _np().concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def column_stack(tup):
    """1-D arrays as the columns of a 2-D array (2-D arrays joined as they are)."""
    return _np().concatenate([a.reshape(-1, 1) if a.ndim < 2 else a for a in tup], axis=1)


def empty_like(prototype, dtype=None):
    """An array of ``prototype``'s shape (zeros: Janus gives no uninitialised memory here)."""
    return _np().zeros_like(prototype) if dtype is None else \
        _np().zeros_like(prototype).astype(dtype)


def identity(n, dtype=None, ctx=None, device=None):
    return _np().eye(n, dtype=dtype, ctx=ctx, device=device)
