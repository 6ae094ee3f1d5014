"""More of MXNet 1.9's ``np`` for code ported from MXNet or NumPy: rounding (``round``,
``around``, ``rint``, ``floor``, ``ceil``, ``trunc``, ``fix``), diagonals (``diag``,
``diagflat``, ``diagonal``, ``trace``), ``ptp``, the positions of nonzero elements
(``nonzero``, ``argwhere``, ``flatnonzero``), and the array methods and properties that forward
to ``np`` functions.

Rounding runs on the floor, ceil and rint operators; diagonals compose take, where and pad; so
autograd records them and hybridize traces them. The positions of nonzero elements have a
data-dependent shape: they run imperatively only."""
import numpy as _onp

from .. import _janus


def _np():
    from .. import numpy as np
    return np


def _npx():
    from .. import numpy_extension as npx
    return npx


def _unary(name, x):
    return _janus.invoke(name, [_np()._as_array(x)], {})[0]


def floor(x):
    """The largest integral value not above each element, in ``x``'s dtype (integers
    unchanged); gradient zero."""
    return _unary("floor", x)


def ceil(x):
    """The smallest integral value not below each element, in ``x``'s dtype (integers
    unchanged); gradient zero."""
    return _unary("ceil", x)


def rint(x):
    """Each element rounded to the nearest integral value, halves to the even one (0.5 -> 0,
    1.5 -> 2), in ``x``'s dtype; gradient zero."""
    return _unary("rint", x)


def _floating_unary(name, doc):
    def fn(x):
        return _unary(name, x)
    fn.__name__ = name
    fn.__doc__ = doc + " (the " + name + " operator; floating dtypes, TypeError otherwise)."
    return fn


tan = _floating_unary("tan", "Tangent, elementwise (radians)")
arcsin = _floating_unary("arcsin", "Inverse sine, elementwise (nan outside [-1, 1])")
arccos = _floating_unary("arccos", "Inverse cosine, elementwise (nan outside [-1, 1])")
arctan = _floating_unary("arctan", "Inverse tangent, elementwise")
sinh = _floating_unary("sinh", "Hyperbolic sine, elementwise")
cosh = _floating_unary("cosh", "Hyperbolic cosine, elementwise")
arcsinh = _floating_unary("arcsinh", "Inverse hyperbolic sine, elementwise")
arccosh = _floating_unary("arccosh", "Inverse hyperbolic cosine, elementwise (nan below 1)")
arctanh = _floating_unary("arctanh", "Inverse hyperbolic tangent, elementwise")
log2 = _floating_unary("log2", "Base-2 logarithm, elementwise")
log10 = _floating_unary("log10", "Base-10 logarithm, elementwise")
expm1 = _floating_unary("expm1", "exp(x) - 1, elementwise, accurate near 0")
cbrt = _floating_unary("cbrt", "Cube root, elementwise")


def trunc(x):
    """Each element rounded toward zero (-1.7 -> -1.0), in ``x``'s dtype; gradient zero."""
    x = _np()._as_array(x)
    if x.dtype.kind != "f":
        return x
    # The sign only picks a branch: no gradient flows through it (both branches have zero).
    negative = _janus.invoke("stop_gradient", [x], {})[0].detach() < 0
    return _np().where(negative, ceil(x), floor(x))


fix = trunc


def around(a, decimals=0, out=None):
    """``a`` rounded to ``decimals`` decimal places, halves to the even value (NumPy's and
    MXNet's rule); as NumPy, the scaled value ``a * 10**decimals`` is what is rounded, so
    1.25 with one decimal gives 1.2. Integers are unchanged for ``decimals >= 0``."""
    if out is not None:
        raise NotImplementedError("around: out is not supported, expected None")
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(f"around: decimals is {decimals!r}, expected an integer")
    a = _np()._as_array(a)
    if a.dtype.kind != "f":
        if decimals >= 0:
            return a
        scale = 10.0 ** -decimals
        return (rint(a.astype("float64") / scale) * scale).astype(a.dtype)
    if decimals == 0:
        return rint(a)
    scale = 10.0 ** decimals
    return rint(a * scale) / scale


round = around
round_ = around


def ptp(a, axis=None, keepdims=False):
    """The range (maximum minus minimum) of ``a`` along ``axis`` (every element when None)."""
    np = _np()
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


def _axis(axis, ndim, name):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for an array of {ndim} axes")
    return axis % ndim


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` (above the main one when positive) of the matrices that axes
    ``axis1`` and ``axis2`` of ``a`` span, as the last axis of the result (NumPy's layout).
    A copy, where NumPy returns a read-only view."""
    if a.ndim < 2:
        raise ValueError(f"diagonal: the array has {a.ndim} axes, expected at least 2")
    i, j = _axis(axis1, a.ndim, "diagonal"), _axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise ValueError(f"diagonal: axis1 and axis2 are both axis {i}, expected two "
                         "different axes")
    rest = [d for d in range(a.ndim) if d not in (i, j)]
    m = a.transpose(rest + [i, j])
    rows, cols = m.shape[-2], m.shape[-1]
    lead = tuple(m.shape[:-2])
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    n = max(0, min(rows - start_r, cols - start_c))
    pos = (_onp.arange(n, dtype=_onp.int64) + start_r) * cols + start_c + _onp.arange(n)
    flat = m.reshape(lead + (rows * cols,))
    idx = _janus.from_numpy(pos.astype(_onp.int64), None, a.ctx)
    return _janus.take(flat, idx, len(lead))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of the diagonal ``offset`` of ``a`` (see ``diagonal``)."""
    if out is not None:
        raise NotImplementedError("trace: out is not supported, expected None")
    r = _np().sum(diagonal(a, offset, axis1, axis2), axis=-1)
    return r if dtype is None else r.astype(dtype)


def _diag_matrix(v, k):
    np = _np()
    n = v.shape[0]
    i = np.arange(n, dtype="int64", ctx=v.ctx).reshape(n, 1)
    j = np.arange(n, dtype="int64", ctx=v.ctx).reshape(1, n)
    square = np.where(i == j, np.broadcast_to(v.reshape(1, n), (n, n)),
                      np.zeros((n, n), dtype=v.dtype, ctx=v.ctx))
    if k == 0:
        return square
    # Diagonal k of an (n + |k|)-square matrix: pad k columns before and k rows after (k > 0),
    # or |k| rows before and |k| columns after (k < 0).
    s = abs(k)
    widths = [0, s, s, 0] if k > 0 else [s, 0, 0, s]
    return _janus.pad(square, widths, 0.0)


def diag(v, k=0):
    """A 1-D ``v``: the square matrix with ``v`` on its diagonal ``k``; a 2-D ``v``: its
    diagonal ``k``."""
    v = _np()._as_array(v)
    if v.ndim == 1:
        return _diag_matrix(v, int(k))
    if v.ndim == 2:
        return diagonal(v, int(k))
    raise ValueError(f"diag: the array has {v.ndim} axes, expected 1 or 2")


def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on its diagonal ``k``."""
    return _diag_matrix(_np()._as_array(v).reshape(-1), int(k))


def _positions(qualname, a):
    """The NumPy array of ``a`` to find nonzero elements in, which a trace does not have."""
    from ..base import TraceError
    a = _np()._as_array(a)
    if a._is_symbol:
        raise TraceError(f"{qualname}: its output size depends on the values, which a "
                         f"hybridized block's trace does not have; call {qualname} outside the "
                         "hybridized forward (imperatively)")
    return a, a.asnumpy()


def nonzero(a):
    """One int64 array per axis of ``a``, the positions of its nonzero elements in row-major
    order. The count depends on the values: imperative only (TraceError in a hybridized
    forward), not differentiable; it waits for ``a``."""
    a, host = _positions("np.nonzero", a)
    if host.ndim == 0:
        raise ValueError("nonzero: the array is 0-d, expected at least one axis (use "
                         "np.atleast_1d(a).nonzero(), as NumPy requires)")
    return tuple(_janus.from_numpy(p.astype(_onp.int64), None, a.ctx)
                 for p in _onp.nonzero(host))


def argwhere(a):
    """The int64 positions of the nonzero elements of ``a``, one row each (shape (count,
    a.ndim)); imperative only, as ``nonzero``."""
    a, host = _positions("np.argwhere", a)
    return _janus.from_numpy(_onp.argwhere(host).astype(_onp.int64), None, a.ctx)


def flatnonzero(a):
    """The int64 positions of the nonzero elements of the flattened ``a``; imperative only, as
    ``nonzero``."""
    a, host = _positions("np.flatnonzero", a)
    return _janus.from_numpy(_onp.flatnonzero(host).astype(_onp.int64), None, a.ctx)


_TAKE_MODES = ("raise", "wrap", "clip")


def take(a, indices, axis=None, out=None, mode="raise"):
    """The elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None,
    as NumPy and MXNet). mode 'raise': an index outside [-n, n) is an IndexError; 'wrap': taken
    modulo n; 'clip': clamped to [0, n) (MXNet's default was 'clip'; NumPy's, kept here, is
    'raise')."""
    np = _np()
    if out is not None:
        raise NotImplementedError("take: out is not supported, expected None")
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode is {mode!r}, expected one of {list(_TAKE_MODES)}")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = _axis(axis, a.ndim, "take") if a.ndim else axis
    idx = np._as_array(indices).astype("int64", copy=False)
    n = a.shape[axis]
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = _janus.clip(idx, 0.0, float(max(n - 1, 0)))
    return _janus.take(a, idx, axis)


def fabs(x):
    """The absolute value of each element (the abs operator)."""
    return _np().abs(x)


def positive(x):
    """A copy of ``x`` (``+x``)."""
    return _np()._as_array(x).copy()


def reciprocal(x):
    """``1 / x``, elementwise."""
    return 1.0 / _np()._as_array(x)


def deg2rad(x):
    """Degrees to radians: ``x * (pi / 180)``, NumPy's very product."""
    return _np()._as_array(x) * (_onp.pi / 180.0)


def rad2deg(x):
    """Radians to degrees: ``x * (180 / pi)``, NumPy's very product."""
    return _np()._as_array(x) * (180.0 / _onp.pi)


radians = deg2rad
degrees = rad2deg


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Where ``|a - b| <= atol + rtol * |b|`` (NumPy's test; infinities close only to
    themselves; NaN close to NaN only with ``equal_nan``)."""
    np = _np()
    like = a if isinstance(a, np.ndarray) else b
    a, b = np._as_array(a, like), np._as_array(b, like)
    finite = np.logical_and(np.isfinite(a), np.isfinite(b))
    near = np.abs(a - b) <= atol + rtol * np.abs(b)
    close = np.where(finite, near, a == b)
    if equal_nan:
        close = np.logical_or(close, np.logical_and(np.isnan(a), np.isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` (see ``isclose``): a Python bool, as
    NumPy (MXNet returned a 0-d array); it waits for the values."""
    return bool(_np().all(isclose(a, b, rtol, atol, equal_nan)).item())


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements: a Python bool."""
    np = _np()
    a1, a2 = np._as_array(a1), np._as_array(a2)
    if a1.shape != a2.shape:
        return False
    same = a1 == a2
    if equal_nan:
        same = np.logical_or(same, np.logical_and(np.isnan(a1), np.isnan(a2)))
    return bool(np.all(same).item())


def fliplr(m):
    """``m`` with the order of its columns (axis 1) reversed."""
    if m.ndim < 2:
        raise ValueError(f"fliplr: the array has {m.ndim} axes, expected at least 2")
    return _np().flip(m, 1)


def flipud(m):
    """``m`` with the order of its rows (axis 0) reversed."""
    if m.ndim < 1:
        raise ValueError("fliplr: the array is 0-d, expected at least 1 axis")
    return _np().flip(m, 0)


def roll(a, shift, axis=None):
    """``a`` with its elements shifted by ``shift`` along ``axis`` (the flattened array when
    None, then reshaped), those pushed past the end coming back at the start."""
    np = _np()
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:
        shifts = tuple(shifts) * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = tuple(axes) * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes, expected as many")
    for s, ax in zip(shifts, axes):
        ax = _axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0 or int(s) % n == 0:
            continue
        k = int(s) % n
        a = np.concatenate([_janus.slice_axis(a, ax, n - k, n), _janus.slice_axis(a, ax, 0, n - k)],
                           axis=ax)
    return a


def atleast_3d(*arys):
    """Each array with at least 3 axes: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    np = _np()
    out = []
    for a in arys:
        a = np._as_array(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, a.shape[0], 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def dstack(tup):
    """The arrays concatenated along axis 2 (each made at least 3-D first)."""
    return _np().concatenate([atleast_3d(a) for a in tup], axis=2)


def array_split(ary, indices_or_sections, axis=0):
    """``ary`` split along ``axis``; an integer count need not divide the extent (the first
    ``extent % count`` parts get one more element)."""
    np = _np()
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0:
            raise ValueError(f"array_split: {indices_or_sections} sections, expected at least 1")
        n = ary.shape[axis]
        q, r = n // indices_or_sections, n % indices_or_sections
        sizes = [q + 1] * r + [q] * (indices_or_sections - r)
        bounds = list(_onp.cumsum(sizes)[:-1])
        return np.split(ary, [int(b) for b in bounds], axis=axis)
    return np.split(ary, list(indices_or_sections), axis=axis)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for a 1-D array)."""
    return _np().split(ary, indices_or_sections, axis=1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 of an array of at least 2 axes."""
    if ary.ndim < 2:
        raise ValueError(f"vsplit: the array has {ary.ndim} axes, expected at least 2")
    return _np().split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 of an array of at least 3 axes."""
    if ary.ndim < 3:
        raise ValueError(f"dsplit: the array has {ary.ndim} axes, expected at least 3")
    return _np().split(ary, indices_or_sections, axis=2)


def diff(a, n=1, axis=-1):
    """The ``n``-th differences ``a[i + 1] - a[i]`` along ``axis``."""
    if n < 0:
        raise ValueError(f"diff: order n is {n}, expected at least 0")
    ax = _axis(axis, a.ndim, "diff")
    for _ in range(n):
        m = a.shape[ax]
        a = _janus.slice_axis(a, ax, min(1, m), m) - _janus.slice_axis(a, ax, 0, max(m - 1, 0))
    return a


def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    """Coordinate arrays from 1-D coordinate vectors ('xy': Cartesian, the first two axes
    exchanged; 'ij': matrix indexing)."""
    np = _np()
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing is {indexing!r}, expected 'xy' or 'ij'")
    vecs = [np._as_array(x).reshape(-1) for x in xi]
    shape = [v.shape[0] for v in vecs]
    if indexing == "xy" and len(vecs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(vecs):
        pos = i
        if indexing == "xy" and len(vecs) > 1 and i < 2:
            pos = 1 - i
        view = [1] * len(vecs)
        view[pos] = v.shape[0]
        g = v.reshape(tuple(view))
        out.append(g if sparse else np.broadcast_to(g, tuple(shape)))
    return out


def tensordot(a, b, axes=2):
    """Sums of products over the last ``axes`` axes of ``a`` and the first of ``b`` (an
    integer), or over the axes that two sequences pair; a transpose, a reshape and one dot."""
    np = _np()
    if isinstance(axes, int):
        axes_a = list(range(a.ndim - axes, a.ndim))
        axes_b = list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: {len(axes_a)} axes of a paired with {len(axes_b)} of b")
    axes_a = [_axis(x, a.ndim, "tensordot") for x in axes_a]
    axes_b = [_axis(x, b.ndim, "tensordot") for x in axes_b]
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of a has extent {a.shape[i]}, axis {j} of b "
                             f"has {b.shape[j]}, expected equal")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    k = int(_onp.prod([a.shape[i] for i in axes_a]))
    at = a.transpose(free_a + axes_a).reshape(-1, k)
    bt = b.transpose(axes_b + free_b).reshape(k, -1)
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b)
    return np.dot(at, bt).reshape(shape)


def inner(a, b):
    """Sums of products over the last axes of ``a`` and ``b``."""
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def vdot(a, b):
    """The dot product of the flattened ``a`` and ``b`` (real arrays)."""
    return _np().dot(a.reshape(-1), b.reshape(-1))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and the infinities by ``posinf`` and ``neginf`` (the
    dtype's largest and lowest finite values by default); integers unchanged."""
    np = _np()
    x = np._as_array(x)
    if x.dtype.kind != "f":
        return x.copy() if copy else x
    info = _onp.finfo(x.dtype)
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)
    r = np.where(np.isnan(x), np.full_like(x, nan), x)
    r = np.where(r == _onp.inf, np.full_like(x, hi), r)
    r = np.where(r == -_onp.inf, np.full_like(x, lo), r)
    if not copy:
        x[...] = r
        return x
    return r


def isposinf(x):
    """Where ``x`` is +inf."""
    return _np()._as_array(x) == _onp.inf


def isneginf(x):
    """Where ``x`` is -inf."""
    return _np()._as_array(x) == -_onp.inf


def average(a, axis=None, weights=None, returned=False):
    """The mean of ``a`` along ``axis``, weighted by ``weights`` (``a``'s shape, or 1-D along
    ``axis``) when given; with ``returned`` also the sum of the weights."""
    np = _np()
    if weights is None:
        avg = np.mean(a, axis=axis)
        n = a.size if axis is None else a.shape[axis]
        total = np.full_like(avg, float(n))
        return (avg, total) if returned else avg
    w = np._as_array(weights, a)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1 or w.shape[0] != a.shape[axis]:
            raise ValueError(f"average: weights of shape {w.shape} for an array of shape "
                             f"{a.shape}, expected its shape or 1-D along axis {axis}")
        view = [1] * a.ndim
        view[_axis(axis, a.ndim, "average")] = w.shape[0]
        w = np.broadcast_to(w.reshape(tuple(view)), a.shape)
    total = np.sum(w, axis=axis)
    avg = np.sum(a * w, axis=axis) / total
    return (avg, total) if returned else avg


def real(x):
    """The real part of a real array: the array itself (Janus has no complex dtype)."""
    return _np()._as_array(x)


NAN = NaN = _onp.nan
PINF = _onp.inf
NINF = -_onp.inf
PZERO = 0.0
NZERO = -0.0
finfo = _onp.finfo
promote_types = _onp.promote_types
min_scalar_type = _onp.min_scalar_type


def result_type(*arrays_and_dtypes):
    """NumPy's promotion of the dtypes of the arguments (arrays count by their dtype)."""
    nd = _np().ndarray
    return _onp.result_type(*[a.dtype if isinstance(a, nd) else a for a in arrays_and_dtypes])


def broadcast_arrays(*args):
    """The arrays broadcast to their common shape."""
    np = _np()
    arrays = [np._as_array(a) for a in args]
    shape = _onp.broadcast_shapes(*[a.shape for a in arrays])
    return [a if a.shape == shape else np.broadcast_to(a, shape) for a in arrays]


def rollaxis(a, axis, start=0):
    """``a`` with axis ``axis`` moved to before position ``start`` (NumPy's older
    ``moveaxis``)."""
    n = a.ndim
    axis = _axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start {start} is out of range for an array of {n} axes")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return _np().moveaxis(a, axis, start) if axis != start else a


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    toward the second."""
    np = _np()
    if len(axes) != 2:
        raise ValueError(f"rot90: axes is {axes!r}, expected two axes")
    a0, a1 = _axis(axes[0], m.ndim, "rot90"), _axis(axes[1], m.ndim, "rot90")
    if a0 == a1:
        raise ValueError(f"rot90: both axes are axis {a0}, expected two different axes")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return np.flip(np.flip(m, a0), a1)
    order = list(range(m.ndim))
    order[a0], order[a1] = order[a1], order[a0]
    return np.flip(m, a1).transpose(order) if k == 1 else np.flip(m.transpose(order), a1)


def _index_arrays(host, ctx):
    return tuple(_janus.from_numpy(p.astype(_onp.int64), None, ctx) for p in host)


def tril_indices_from(arr, k=0):
    """The int64 (rows, columns) of the lower triangle of the 2-D ``arr``'s shape."""
    if arr.ndim != 2:
        raise ValueError(f"tril_indices_from: the array has {arr.ndim} axes, expected 2")
    return _index_arrays(_onp.tril_indices(arr.shape[0], k, arr.shape[1]), arr.ctx)


def triu_indices_from(arr, k=0):
    """The int64 (rows, columns) of the upper triangle of the 2-D ``arr``'s shape."""
    if arr.ndim != 2:
        raise ValueError(f"triu_indices_from: the array has {arr.ndim} axes, expected 2")
    return _index_arrays(_onp.triu_indices(arr.shape[0], k, arr.shape[1]), arr.ctx)


def diag_indices_from(arr):
    """The int64 positions of the main diagonal of ``arr``, whose axes have one extent."""
    if arr.ndim < 2 or len(set(arr.shape)) != 1:
        raise ValueError(f"diag_indices_from: the array has shape {arr.shape}, expected at "
                         "least 2 axes of one extent")
    return _index_arrays(_onp.diag_indices(arr.shape[0], arr.ndim), arr.ctx)


def indices(dimensions, dtype=None, ctx=None, device=None):
    """The grid of positions of an array of shape ``dimensions``: shape (len(dimensions),
    *dimensions), int64 unless ``dtype`` says otherwise."""
    dt = _onp.int64 if dtype is None else _onp.dtype(dtype)
    return _np().array(_onp.indices(tuple(dimensions)).astype(dt), dtype=dt,
                       ctx=ctx if ctx is not None else device)


def heaviside(x1, x2):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0`` (nan stays nan)."""
    np = _np()
    x1 = np._as_array(x1)
    x2 = np._as_array(x2, x1)
    step = np.where(x1 < 0, np.zeros_like(x1), np.ones_like(x1))
    return np.where(x1 == 0, np.broadcast_to(x2, step.shape) * np.ones_like(step),
                    np.where(np.isnan(x1), x1, step))


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast to one shape with equal elements: a Python bool."""
    np = _np()
    a1, a2 = np._as_array(a1), np._as_array(a2)
    try:
        _onp.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(np.all(a1 == a2).item())


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened ``ary``, with ``to_begin`` and ``to_end`` around."""
    np = _np()
    ary = np._as_array(ary)
    parts = [diff(ary.reshape(-1))]
    if to_begin is not None:
        parts.insert(0, np._as_array(to_begin, ary).reshape(-1).astype(ary.dtype))
    if to_end is not None:
        parts.append(np._as_array(to_end, ary).reshape(-1).astype(ary.dtype))
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _nan_filled(a, value):
    np = _np()
    a = np._as_array(a)
    if a.dtype.kind != "f":
        return a
    return np.where(np.isnan(a), np.full_like(a, value), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """The sum along ``axis`` counting NaN as 0."""
    r = _np().sum(_nan_filled(a, 0.0), axis=axis, keepdims=keepdims)
    return r if dtype is None else r.astype(dtype)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """The product along ``axis`` counting NaN as 1."""
    r = _np().prod(_nan_filled(a, 1.0), axis=axis, keepdims=keepdims)
    return r if dtype is None else r.astype(dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sums along ``axis`` (the flattened array when None) counting NaN as 0."""
    return _np().cumsum(_nan_filled(a, 0.0), axis=axis, dtype=dtype)


def _nan_extreme(a, axis, keepdims, fill, reduce):
    np = _np()
    a = np._as_array(a)
    if a.dtype.kind != "f":
        return reduce(a, axis=axis, keepdims=keepdims)
    r = reduce(_nan_filled(a, fill), axis=axis, keepdims=keepdims)
    every_nan = np.all(np.isnan(a), axis=axis, keepdims=keepdims)
    return np.where(every_nan, np.full_like(r, _onp.nan), r)


def nanmax(a, axis=None, out=None, keepdims=False):
    """The maximum along ``axis`` ignoring NaN (NaN where every element is NaN; NumPy also
    warns there)."""
    return _nan_extreme(a, axis, keepdims, -_onp.inf, _np().max)


def nanmin(a, axis=None, out=None, keepdims=False):
    """The minimum along ``axis`` ignoring NaN (NaN where every element is NaN)."""
    return _nan_extreme(a, axis, keepdims, _onp.inf, _np().min)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None,
             device=None):
    """``base ** linspace(start, stop, num)`` (NumPy's very computation)."""
    np = _np()
    if axis != 0:
        raise NotImplementedError(f"logspace: axis is {axis}, expected 0")
    y = np.linspace(start, stop, num, endpoint, dtype="float64" if dtype is None else dtype,
                    ctx=ctx, device=device)
    r = np.power(float(base), y)
    return r.astype("float32" if dtype is None else dtype)


def divmod(x1, x2):
    """``(x1 // x2, x1 % x2)``, the quotient rounded down and the remainder with x2's sign."""
    np = _np()
    return np.floor_divide(x1, x2), np.mod(x1, x2)


def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 (NumPy's float_power)."""
    np = _np()
    like = x1 if isinstance(x1, np.ndarray) else x2
    return np.power(np._as_array(x1, like).astype("float64"),
                    np._as_array(x2, like).astype("float64"))


def modf(x):
    """The fractional and integral parts of each element, both with the element's sign."""
    t = trunc(x)
    return _np()._as_array(x) - t, t


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (both flattened when None)."""
    np = _np()
    arr = np._as_array(arr)
    # Python values take the array's dtype; two arrays must share one (no promotion).
    values = values if isinstance(values, np.ndarray) else np.array(values, dtype=arr.dtype)
    if axis is None:
        return np.concatenate([arr.reshape(-1), values.reshape(-1)])
    return np.concatenate([arr, values], axis=axis)


def msort(a):
    """``a`` sorted along axis 0."""
    return _np().sort(a, axis=0)


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else ``default``."""
    np = _np()
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions for {len(choicelist)} choices, "
                         "expected as many")
    if not condlist:
        raise ValueError("select: no conditions, expected at least one")
    like = next((c for c in choicelist if isinstance(c, np.ndarray)), None)
    choices = [np._as_array(c, like) for c in choicelist]
    result = np._as_array(default, choices[0])
    for cond, choice in zip(reversed(condlist), reversed(choices)):
        result = np.where(np._as_array(cond), choice, result)
    return result


def unravel_index(indices, shape, order="C"):
    """The positions in an array of ``shape`` of the flat ``indices`` (row-major): one int64
    array per axis."""
    np = _np()
    if order != "C":
        raise NotImplementedError(f"unravel_index: order is {order!r}, expected 'C'")
    idx = np._as_array(indices).astype("int64")
    size = int(_onp.prod(shape))
    host = idx.asnumpy() if not idx._is_symbol else None
    if host is not None and host.size and (host.min() < 0 or host.max() >= size):
        raise ValueError(f"unravel_index: an index is outside [0, {size}) for shape "
                         f"{tuple(shape)}")
    out = []
    for extent in reversed(tuple(shape)):
        out.append(np.mod(idx, extent))
        idx = np.floor_divide(idx, extent)
    return tuple(reversed(out))


def trapz(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at points ``x`` (1-D along
    the axis, or ``y``'s shape) or spaced ``dx``."""
    np = _np()
    y = np._as_array(y)
    ax = _axis(axis, y.ndim, "trapz")
    n = y.shape[ax]
    if x is None:
        d = dx
    else:
        x = np._as_array(x, y)
        if x.ndim == 1:
            d = diff(x)
            view = [1] * y.ndim
            view[ax] = d.shape[0]
            d = d.reshape(tuple(view))
        else:
            d = diff(x, axis=ax)
    pair = _janus.slice_axis(y, ax, 1, n) + _janus.slice_axis(y, ax, 0, max(n - 1, 0))
    return np.sum(d * pair / 2.0, axis=ax)


def isin(element, test_elements, assume_unique=False, invert=False):
    """Where an element of ``element`` equals some element of ``test_elements`` (every pair
    compared: memory grows with the product of the sizes)."""
    np = _np()
    element = np._as_array(element)
    tests = np._as_array(test_elements, element).reshape(-1)
    hit = np.any(np.expand_dims(element, -1) == tests, axis=-1)
    return np.logical_not(hit) if invert else hit


def in1d(ar1, ar2, assume_unique=False, invert=False):
    """``isin`` of the flattened ``ar1``."""
    return isin(_np()._as_array(ar1).reshape(-1), ar2, assume_unique, invert)


def union1d(ar1, ar2):
    """The sorted distinct values in either array (flattened); imperative only, as np.unique."""
    np = _np()
    ar1 = np._as_array(ar1)
    return np.unique(np.concatenate([ar1.reshape(-1), np._as_array(ar2, ar1).reshape(-1)]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted distinct values in both arrays (flattened); imperative only."""
    np = _np()
    if return_indices:
        raise NotImplementedError("intersect1d: return_indices is not supported")
    a = np.unique(np._as_array(ar1))
    return a[isin(a, np.unique(np._as_array(ar2, a)))]


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted distinct values of ``ar1`` that are not in ``ar2``; imperative only."""
    np = _np()
    a = np.unique(np._as_array(ar1))
    return a[isin(a, np._as_array(ar2, a), invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted distinct values in exactly one of the arrays; imperative only."""
    np = _np()
    a, b = np.unique(np._as_array(ar1)), np.unique(np._as_array(ar2))
    return np.sort(np.concatenate([a[isin(a, b, invert=True)], b[isin(b, a, invert=True)]]))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``m`` (columns when not
    ``rowvar``), with ``y``'s variables appended; divisor n - 1 (n with ``bias``, n - ddof when
    given). Weights are not supported."""
    np = _np()
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    x = np._as_array(m)
    x = x.reshape(1, -1) if x.ndim == 1 else (x if rowvar else x.T)
    if y is not None:
        yy = np._as_array(y, x)
        yy = yy.reshape(1, -1) if yy.ndim == 1 else (yy if rowvar else yy.T)
        x = np.concatenate([x, yy], axis=0)
    if x.dtype.kind != "f":
        x = x.astype("float64")
    n = x.shape[1]
    d = (0 if bias else 1) if ddof is None else ddof
    centered = x - np.mean(x, axis=1, keepdims=True)
    c = np.dot(centered, centered.T) / float(n - d)
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """The Pearson correlation coefficients of the variables (see ``cov``), clipped to
    [-1, 1] as NumPy."""
    np = _np()
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = np.sqrt(diagonal(c))
    r = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return np.clip(r, -1.0, 1.0)


# Array methods and properties.
def _fill(self, value):
    """Sets every element to ``value`` (in place)."""
    self[...] = value


def _real_only(name):
    def method(self):
        if self.dtype.kind == "c":
            raise TypeError(f"{name}: complex arrays are not supported")
        return self
    method.__name__ = name
    method.__doc__ = f"``{name}`` of a real array: the array itself (Janus has no complex dtype)."
    return method


def _tostype(self, stype):
    """MXNet's storage conversion: 'default' (dense) is the only storage Janus has."""
    if stype != "default":
        from ..base import NotSupportedError
        raise NotSupportedError(f"tostype: storage type {stype!r} is not supported, expected "
                                "'default' (Janus arrays are dense)")
    return self


def _one_hot(self, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    """MXNet's one_hot method: ``on_value`` at each index's position along a new last axis of
    extent ``depth``, ``off_value`` elsewhere."""
    r = _npx().one_hot(self, depth, dtype)
    if (on_value, off_value) != (1.0, 0.0):
        r = r * (on_value - off_value) + off_value
    return r


def _shape_array(self):
    """The shape as a 1-D int64 array (MXNet's shape_array)."""
    return _np().array(_onp.array(self.shape, dtype=_onp.int64), dtype="int64", ctx=self.ctx)


def _imag(self):
    """The imaginary part of a real array: zeros of its shape and dtype."""
    return _np().zeros_like(self)


def _install_methods():
    np = _np()
    nd = np.ndarray
    methods = {
        "all": lambda self, axis=None, keepdims=False: np.all(self, axis, keepdims),
        "any": lambda self, axis=None, keepdims=False: np.any(self, axis, keepdims),
        "cumsum": lambda self, axis=None, dtype=None, out=None: np.cumsum(self, axis, dtype),
        "ravel": lambda self, order="C": np.ravel(self, order),
        "repeat": lambda self, repeats, axis=None: np.repeat(self, repeats, axis),
        "std": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False:
            np.std(self, axis, dtype, None, ddof, keepdims),
        "var": lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False:
            np.var(self, axis, dtype, None, ddof, keepdims),
        "swapaxes": lambda self, axis1, axis2: np.swapaxes(self, axis1, axis2),
        "take": lambda self, indices, axis=None, out=None, mode="raise":
            take(self, indices, axis, out, mode),
        "round": lambda self, decimals=0: around(self, decimals),
        "searchsorted": lambda self, v, side="left", sorter=None:
            np.searchsorted(self, v, side, sorter),
        "nonzero": nonzero,
        "diagonal": diagonal,
        "trace": trace,
        "ptp": ptp,
        "fill": _fill,
        "rsqrt": lambda self: _janus.invoke("rsqrt", [self], {})[0],
        "log_softmax": lambda self, axis=-1: _npx().log_softmax(self, axis),
        "softmin": lambda self, axis=-1: _npx().softmax(-self, axis),
        "one_hot": _one_hot,
        "pick": lambda self, index, axis=-1, keepdims=False:
            _npx().pick(self, index, axis, keepdims),
        "shape_array": _shape_array,
        "size_array": lambda self: _np().array([self.size], dtype="int64", ctx=self.ctx),
        "tostype": _tostype,
        "tan": tan, "arcsin": arcsin, "arccos": arccos, "arctan": arctan, "sinh": sinh,
        "cosh": cosh, "arcsinh": arcsinh, "arccosh": arccosh, "arctanh": arctanh, "log2": log2,
        "log10": log10, "expm1": expm1, "cbrt": cbrt,
        "degrees": rad2deg, "radians": deg2rad,
        "asscalar": lambda self: self.item(),
        "nansum": lambda self, axis=None, dtype=None, out=None, keepdims=False:
            nansum(self, axis, dtype, None, keepdims),
        "nanprod": lambda self, axis=None, dtype=None, out=None, keepdims=False:
            nanprod(self, axis, dtype, None, keepdims),
        "slice_axis": lambda self, axis, begin, end:
            _janus.slice_axis(self, axis, begin, self.shape[axis] if end is None else end),
        "broadcast_like": lambda self, other: np.broadcast_to(self, other.shape),
        "reshape_like": lambda self, other: self.reshape(other.shape),
        "floor": floor, "ceil": ceil, "rint": rint, "trunc": trunc, "fix": fix,
        "diag": lambda self, k=0: diag(self, k),
        "flip": lambda self, axis=None: np.flip(self, axis),
        "tile": lambda self, reps: np.tile(self, reps),
        "expand_dims": lambda self, axis: np.expand_dims(self, axis),
        "broadcast_to": lambda self, shape: np.broadcast_to(self, shape),
        "split": lambda self, indices_or_sections, axis=0:
            np.split(self, indices_or_sections, axis),
        "zeros_like": lambda self: np.zeros_like(self),
        "ones_like": lambda self: np.ones_like(self),
        "reciprocal": reciprocal,
        "sign": lambda self: np.sign(self),
        "sin": lambda self: np.sin(self), "cos": lambda self: np.cos(self),
        "tanh": lambda self: np.tanh(self), "log1p": lambda self: np.log1p(self),
        "conj": _real_only("conj"),
        "conjugate": _real_only("conjugate"),
    }
    for name, fn in methods.items():
        if not hasattr(nd, name):
            setattr(nd, name, fn)
    for name, fn in {"nbytes": lambda self: self.size * self.dtype.itemsize,
                     "itemsize": lambda self: self.dtype.itemsize,
                     "real": _real_only("real"), "imag": _imag,
                     "stype": lambda self: "default"}.items():
        if not hasattr(nd, name):
            setattr(nd, name, property(fn))
