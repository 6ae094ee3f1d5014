"""Sorting and set functions: ``np.sort``, ``np.argsort``, ``np.unique``, ``np.searchsorted``,
``np.take_along_axis`` and ``npx.topk``, over Janus's sort, argsort, topk, searchsorted and
take_along_axis operators (so autograd records them and
hybridize traces them), and the array methods ``sort``, ``argsort`` and ``topk``.

The order is NumPy's: ascending, NaN after every number, equal elements in their original
order (every ``kind`` is this stable sort)."""
import numpy as _onp

from .. import _janus

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(name, kind, order):
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind is {kind!r}, expected one of {list(_KINDS)}")
    if order is not None:
        raise NotImplementedError(f"{name}: order is {order!r}, expected None (Janus arrays "
                                  "have no fields)")


def _flat_or(a, axis):
    """``a`` flattened with axis 0 when axis is None, else ``a`` and ``axis``."""
    return (a.reshape(-1), 0) if axis is None else (a, axis)


def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy of ``a`` along ``axis`` (the flattened array when None)."""
    _check_kind("sort", kind, order)
    a, axis = _flat_or(a, axis)
    return _janus.invoke("sort", [a], {"axis": axis})[0]


def argsort(a, axis=-1, kind=None, order=None):
    """The int64 positions that sort ``a`` along ``axis`` (the flattened array when None)."""
    _check_kind("argsort", kind, order)
    a, axis = _flat_or(a, axis)
    return _janus.invoke("argsort", [a], {"axis": axis, "dtype": "int64"})[0]


def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """MXNet's topk: the k largest (is_ascend: smallest) elements along ``axis`` (the
    flattened array when None). ret_typ 'value': their values; 'indices': their positions in
    ``dtype`` (float32 by default, as MXNet); 'mask': ``data``'s shape with 1 at them; 'both':
    [values, positions]."""
    data, axis = _flat_or(data, axis)
    out = _janus.invoke("topk", [data], {"axis": axis, "k": k, "ret_typ": ret_typ,
                                          "is_ascend": bool(is_ascend), "dtype": dtype})
    return list(out) if ret_typ == "both" else out[0]


def take_along_axis(arr, indices, axis):
    """The elements of ``arr`` at ``indices`` along ``axis`` (both flattened when None), as
    ``np.take_along_axis(a, np.argsort(a, axis), axis)`` uses it: ``indices`` has ``arr``'s
    shape except along the axis (no broadcasting), positions in [-n, n). Differentiable in
    ``arr``."""
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    return _janus.invoke("take_along_axis", [arr, indices], {"axis": axis})[0]


def _is_nan(x):
    return x != x


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted distinct values of ``ar`` (flattened; NaNs count as one value), or with
    ``axis`` its distinct slices along that axis in lexicographic order, and on request the
    position of each one's first occurrence, the position in the result of each element (or
    slice) of ``ar`` and how often each occurs (int64).

    The result's size depends on the values, so it runs imperatively only: the sort of the
    flattened array is Janus's argsort operator, the lexicographic sort of slices NumPy's
    lexsort on the host, and the grouping of equal neighbours reads the sorted values on the
    host. There is no gradient."""
    from ..base import TraceError
    if ar._is_symbol:
        raise TraceError("unique: its output size depends on the values, which a hybridized "
                         "block's trace does not have; call np.unique outside the hybridized "
                         "forward (imperatively)")
    from .. import numpy as np
    if axis is None:
        flat = ar.reshape(-1)
        order = _janus.invoke("argsort", [flat], {"axis": 0, "dtype": "int64"})[0].asnumpy()
        rows = flat.asnumpy()[order].reshape(-1, 1)
    else:
        if not -ar.ndim <= axis < ar.ndim:
            raise ValueError(f"unique: axis {axis} is out of range for an array of shape "
                             f"{ar.shape}, expected -{ar.ndim} <= axis < {ar.ndim}")
        moved = _onp.moveaxis(ar.asnumpy(), axis, 0)
        keys = moved.reshape(moved.shape[0], -1)
        order = _onp.lexsort(keys.T[::-1]) if keys.shape[1] else _onp.arange(keys.shape[0])
        rows = keys[order]
    n = rows.shape[0]
    first = _onp.ones(n, dtype=bool)
    if n > 1:
        differs = rows[1:] != rows[:-1]
        if rows.dtype.kind == "f":  # NaN != NaN, but NaNs are one value (NumPy's equal_nan)
            differs &= ~(_is_nan(rows[1:]) & _is_nan(rows[:-1]))
        first[1:] = differs.any(axis=1)
    ctx = ar.ctx
    if axis is None:
        values = rows[first, 0]
    else:
        values = _onp.moveaxis(rows[first].reshape((-1,) + moved.shape[1:]), 0, axis)
    out = [np.array(values, dtype=rows.dtype, ctx=ctx)]
    if return_index:  # a stable sort puts each value's first occurrence first
        out.append(np.array(order[first], dtype="int64", ctx=ctx))
    if return_inverse:
        inverse = _onp.empty(n, dtype=_onp.int64)
        inverse[order] = _onp.cumsum(first) - 1
        out.append(np.array(inverse.reshape(ar.shape) if axis is None else inverse,
                            dtype="int64", ctx=ctx))
    if return_counts:
        starts = _onp.flatnonzero(first)
        out.append(np.array(_onp.diff(_onp.append(starts, n)), dtype="int64", ctx=ctx))
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(a, v, side="left", sorter=None):
    """Positions (int64) at which the values ``v`` would go into the sorted 1-D array ``a``
    (``a`` taken in the order ``sorter`` when given) to keep it sorted: before the equal
    elements ('left') or after them ('right'); NaN sorts last, as in np.sort.

    A binary search per value (the searchsorted operator): hybridize traces it."""
    from .. import numpy as np
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side is {side!r}, expected 'left' or 'right'")
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a has shape {a.shape}, expected one dimension")
    if not isinstance(v, _janus.ndarray):
        v = np.array(v, dtype=a.dtype, ctx=a.ctx)
    if sorter is not None:
        a = np.take(a, sorter)
    if v.dtype != a.dtype:
        common = _onp.result_type(_onp.dtype(a.dtype), _onp.dtype(v.dtype))
        a, v = a.astype(common), v.astype(common)
    return _janus.invoke("searchsorted", [a, v], {"right": side == "right"})[0]


def _sort_method(self, axis=-1, kind=None, order=None):
    """Sorts the array in place along ``axis`` (NumPy's ndarray.sort)."""
    self[...] = sort(self, axis, kind, order)


def _argsort_method(self, axis=-1, kind=None, order=None):
    return argsort(self, axis, kind, order)


def _topk_method(self, *args, **kwargs):
    return topk(self, *args, **kwargs)


_janus.ndarray.sort = _sort_method
_janus.ndarray.argsort = _argsort_method
_janus.ndarray.topk = _topk_method
