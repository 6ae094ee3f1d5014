"""``janus.np``: MXNet 1.9's numpy-style arrays over Janus's C++ arrays and operators.

Every function pushes its work to the engine and returns at once; ``asnumpy()``, ``item()``,
``wait_to_read()``, printing and ``npx.waitall()`` wait (with the GIL released)."""
import builtins as _builtins

import numpy as _onp

from .. import _janus
from ..context import current_context as _current_context
from . import random  # noqa: F401
from . import linalg  # noqa: F401

ndarray = _janus.ndarray

float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
int32 = _onp.int32
int64 = _onp.int64
uint8 = _onp.uint8
bool_ = _onp.bool_
dtype = _onp.dtype
pi = _onp.pi
e = _onp.e
inf = _onp.inf
nan = _onp.nan
newaxis = None

# NumPy dtypes that Janus lacks, converted on the way in.
_DTYPE_FALLBACK = {"int8": "int32", "int16": "int32", "uint16": "int32", "uint32": "int64",
                   "uint64": "int64", "float128": "float64"}


def _ctx(ctx, device):
    return ctx if ctx is not None else device


def _host(obj, dtype):
    """A NumPy array of ``obj`` in a dtype Janus holds (default float32, as MXNet)."""
    if isinstance(obj, _onp.ndarray):
        a = obj if dtype is None else obj.astype(dtype)
    else:
        a = _onp.asarray(obj, dtype=dtype)
        if dtype is None and a.dtype.kind in "fiub" and a.dtype != _onp.bool_:
            a = a.astype(_onp.float32)
    if a.dtype.name in _DTYPE_FALLBACK:
        a = a.astype(_DTYPE_FALLBACK[a.dtype.name])
    return a


def array(object, dtype=None, ctx=None, device=None):
    """A new array with a copy of ``object`` (an ndarray, a NumPy array, nested lists or a
    scalar); Python numbers give float32 unless ``dtype`` says otherwise, as in MXNet."""
    ctx = _ctx(ctx, device)
    if isinstance(object, ndarray):
        r = object if ctx is None else object.as_in_ctx(ctx)
        return r.astype(r.dtype if dtype is None else dtype, copy=True)
    return _janus.from_numpy(_host(object, dtype), None, ctx)


asarray = array


def zeros(shape, dtype=None, order="C", ctx=None, device=None):
    return _janus.zeros(shape, dtype, _ctx(ctx, device))


def ones(shape, dtype=None, order="C", ctx=None, device=None):
    return _janus.ones(shape, dtype, _ctx(ctx, device))


def empty(shape, dtype=None, order="C", ctx=None, device=None):
    return _janus.zeros(shape, dtype, _ctx(ctx, device))


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None):
    return _janus.full(shape, float(fill_value), dtype, _ctx(ctx, device))


def zeros_like(a, dtype=None, ctx=None, device=None):
    return _janus.zeros(a.shape, a.dtype if dtype is None else dtype, _ctx(ctx, device) or a.ctx)


def ones_like(a, dtype=None, ctx=None, device=None):
    return _janus.ones(a.shape, a.dtype if dtype is None else dtype, _ctx(ctx, device) or a.ctx)


def full_like(a, fill_value, dtype=None, ctx=None, device=None):
    return _janus.full(a.shape, float(fill_value), a.dtype if dtype is None else dtype,
                       _ctx(ctx, device) or a.ctx)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    if stop is None:
        start, stop = 0, start
    return _janus.arange(float(start), float(stop), float(step), dtype, _ctx(ctx, device))


def linspace(start, stop, num=50, endpoint=True, dtype=None, ctx=None, device=None):
    return _janus.linspace(float(start), float(stop), int(num), endpoint, dtype,
                           _ctx(ctx, device))


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None):
    return _janus.eye(N, -1 if M is None else M, k, dtype, _ctx(ctx, device))


def _as_array(x, like=None):
    if isinstance(x, ndarray):
        return x
    dt = like.dtype if like is not None and _onp.isscalar(x) else None
    ctx = like.ctx if like is not None else None
    return array(x, dtype=dt, ctx=ctx)


# Elementwise functions: arrays, or an array and a Python scalar.
for _name in ["negative", "abs", "square", "sign", "exp", "log", "log1p", "sqrt", "sin", "cos",
              "tanh", "erf", "sigmoid"]:
    globals()[_name] = getattr(_janus, _name)
absolute = abs
for _name in ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
              "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    globals()[_name] = getattr(_janus, _name)
true_divide = divide
sum = _janus.sum
mean = _janus.mean
max = _janus.max
min = _janus.min
amax = max
amin = min
prod = _janus.prod
argmax = _janus.argmax
argmin = _janus.argmin
dot = _janus.dot
matmul = _janus.matmul
clip = _janus.clip


def _is_integer(dt):
    return _onp.issubdtype(dt, _onp.integer)


def floor(x):
    """The largest integer not above each element (integers unchanged)."""
    x = _as_array(x)
    if _is_integer(x.dtype) or x.dtype == _onp.bool_:
        return x
    t = x.astype("int64").astype(x.dtype)  # toward zero
    return t - (t > x).astype(x.dtype)


def floor_divide(x1, x2):
    """``x1 // x2``: the quotient rounded down; integer when both are integers (computed in
    float64, exact below 2**53)."""
    a = x1 if isinstance(x1, ndarray) else None
    b = x2 if isinstance(x2, ndarray) else None
    like = a if a is not None else b
    x1, x2 = _as_array(x1, like), _as_array(x2, like)
    ints = _is_integer(x1.dtype) and _is_integer(x2.dtype)
    if ints:
        q = floor(x1.astype("float64") / x2.astype("float64"))
        return q.astype(x1.dtype if x1.dtype.itemsize >= x2.dtype.itemsize else x2.dtype)
    return floor(x1 / x2)


def _binary(name, x1, x2):
    like = x1 if isinstance(x1, ndarray) else x2
    return _janus.invoke(name, [_as_array(x1, like), _as_array(x2, like)], {})[0]


def mod(x1, x2):
    """``x1 % x2``: the remainder with the sign of ``x2`` (Python's and NumPy's), exact (from
    fmod, as NumPy: ``1e20 % 3`` is 1); ``x % 0`` is nan for floats, 0 for integers."""
    return _binary("mod", x1, x2)


def fmod(x1, x2):
    """The remainder with the sign of ``x1`` (C's fmod); ``x fmod 0`` as for mod."""
    return _binary("fmod", x1, x2)


def arctan2(x1, x2):
    """The angle of the point ``(x2, x1)`` in radians, in [-pi, pi] (floating dtypes)."""
    return _binary("arctan2", x1, x2)


def hypot(x1, x2):
    """``sqrt(x1**2 + x2**2)`` without overflow in between (floating dtypes)."""
    return _binary("hypot", x1, x2)


def copysign(x1, x2):
    """The magnitude of ``x1`` with the sign bit of ``x2`` (floating dtypes)."""
    return _binary("copysign", x1, x2)


remainder = mod


def where(condition, x, y):
    x = _as_array(x, y if isinstance(y, ndarray) else condition)
    y = _as_array(y, x)
    return _janus.where(condition, x, y)


def reshape(a, newshape, order="C"):
    return a.reshape(newshape)


def moveaxis(a, source, destination):
    """``a`` with axis ``source`` moved to ``destination`` (the others keep their order)."""
    n = a.ndim
    if not (-n <= source < n and -n <= destination < n):
        raise IndexError(f"moveaxis: axes {source} -> {destination} out of range for {n} axes")
    order = [i for i in range(n) if i != source % n]
    order.insert(destination % n, source % n)
    return a.transpose(order)


def transpose(a, axes=None):
    return _janus.transpose(a, axes)


def expand_dims(a, axis):
    return _janus.expand_dims(a, axis)


def squeeze(a, axis=None):
    return _janus.squeeze(a, axis)


def broadcast_to(a, shape):
    return _janus.broadcast_to(a, shape)


def concatenate(seq, axis=0, out=None):
    seq = list(seq)
    r = seq[0]
    for a in seq[1:]:
        r = _janus.concat2(r, a, axis)
    return r


concat = concatenate


def stack(arrays, axis=0, out=None):
    return concatenate([_janus.expand_dims(a, axis) for a in arrays], axis=axis)


def split(ary, indices_or_sections, axis=0):
    n = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(f"split: axis {axis} of extent {n} does not divide into "
                             f"{indices_or_sections} equal parts")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0] + list(indices_or_sections) + [n]
    return [_janus.slice_axis(ary, axis, b, e) for b, e in zip(bounds[:-1], bounds[1:])]


def take(a, indices, axis=0):
    return _janus.take(a, _as_array(indices).astype("int64", copy=False), 0 if axis is None else axis)


def pad(x, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not supported, expected 'constant'")
    widths = []
    for w in pad_width:
        widths += [int(w[0]), int(w[1])]
    return _janus.pad(x, widths, float(constant_values))


def copy(a):
    return a.copy()


def waitall():
    """Waits for every operation pushed so far (the GIL released meanwhile)."""
    _janus.waitall()


def shape(a):
    return a.shape


def size(a):
    return a.size


def ndim(a):
    return a.ndim


def _normalize_key(key, shape):
    if not isinstance(key, tuple):
        key = (key,)
    n_real = len([k for k in key if k is not None and k is not Ellipsis])
    out = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (len(shape) - n_real)
        else:
            out.append(k)
    if len([k for k in out if k is not None]) > len(shape):
        raise IndexError(f"too many indices for array of shape {shape}")
    return out


def _boolean_mask(self, mask):
    """self[mask]: the elements (or rows) where ``mask``, whose shape is that of self's leading
    axes, is true. How many there are is known only from the mask's values, so this waits for
    it (a blocker, as in MXNet)."""
    m = mask.asnumpy() if isinstance(mask, ndarray) else _onp.asarray(mask, dtype=bool)
    if m.shape != tuple(self.shape[:m.ndim]):
        raise IndexError(f"boolean index of shape {m.shape} does not match the array's shape "
                         f"{self.shape} (it must equal the leading {m.ndim} axes)")
    rows = self.reshape((-1,) + tuple(self.shape[m.ndim:]))
    idx = _janus.from_numpy(_onp.flatnonzero(m).astype(_onp.int64), None, self.ctx)
    return _janus.take(rows, idx, 0)


def _is_boolean_index(key):
    if isinstance(key, ndarray):
        return key.dtype == _onp.bool_
    if isinstance(key, _onp.ndarray):
        return key.dtype == _onp.bool_
    return (isinstance(key, list) and len(key) > 0
            and _builtins.all(isinstance(k, bool) for k in key))


def _getitem(self, key):
    if _is_boolean_index(key):
        return _boolean_mask(self, key)
    if isinstance(key, (list, _onp.ndarray)) or (isinstance(key, ndarray)):
        idx = _as_array(key) if not isinstance(key, ndarray) else key
        return _janus.take(self, idx.astype("int64", copy=False), 0)
    items = _normalize_key(key, self.shape)
    begin, end, step, out_shape = [], [], [], []
    flip = []  # axes of the result to reverse (slices with a negative step)
    axis = 0
    strided = False
    for k in items:
        if k is None:
            out_shape.append(1)
            continue
        n = self.shape[axis]
        if isinstance(k, slice):
            b, e, s = k.indices(n)
            picked = range(b, e, s)
            if s < 0 and len(picked) > 0:
                # The same elements in ascending order, then that axis reversed.
                flip.append(len(out_shape))
                b, e, s = picked[-1], picked[0] + 1, -s
            elif s < 0:
                b, e, s = 0, 0, 1
            e = _builtins.max(e, b)
            begin.append(b), end.append(e), step.append(s)
            out_shape.append(len(picked))
            strided = strided or (b, e, s) != (0, n, 1)
        else:
            i = int(k)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i = i + n if i < 0 else i
            begin.append(i), end.append(i + 1), step.append(1)
            strided = True
        axis += 1
    out_shape += list(self.shape[axis:])
    r = _janus.strided_slice(self, begin, end, step) if strided else self
    if tuple(out_shape) != r.shape:
        r = r.reshape(tuple(out_shape))
    for ax in flip:
        rev = _janus.from_numpy(_onp.arange(r.shape[ax] - 1, -1, -1, dtype=_onp.int64), None,
                                r.ctx)
        r = _janus.take(r, rev, ax)
    return r


def _setitem(self, key, value):
    if not isinstance(value, ndarray):
        if _onp.isscalar(value):
            value = _janus.full((), float(value), self.dtype, self.ctx)
        else:
            value = array(value, dtype=self.dtype, ctx=self.ctx)
    # A view over the selected elements when they are contiguous: integers, then one slice of
    # step 1, then whole axes. The write is one engine operation on the array's storage.
    view = self
    items = _normalize_key(key, self.shape) if not isinstance(key, (list, ndarray,
                                                                     _onp.ndarray)) else None
    contiguous = items is not None and None not in items
    if contiguous:
        sliced = False
        for k in items:
            n = view.shape[0] if view.ndim else 0
            if sliced:
                if not (isinstance(k, slice) and k.indices(n) == (0, n, 1)):
                    contiguous = False
                    break
                continue
            if isinstance(k, slice):
                b, e, s = k.indices(n)
                if s != 1:
                    contiguous = False
                    break
                view = _janus.view_rows(view, b, _builtins.max(b, e))
                sliced = True
            else:
                i = int(k)
                if i < -n or i >= n:
                    raise IndexError(f"index {i} is out of bounds with size {n}")
                view = _janus.view_at(view, i)
        # The leading slice of a view was taken on axis 0 of what was left; later whole axes
        # need no view.
    if contiguous:
        _janus.assign(view, value)
        return
    # Anything else (steps, index arrays): through the host, a blocker.
    host = self.asnumpy()
    host[key if not isinstance(key, ndarray) else key.asnumpy()] = value.asnumpy()
    _janus.assign(self, _janus.from_numpy(host, None, self.ctx))


def _symbol_text(self):
    """How a symbolic array (a placeholder while a hybridized block is traced) prints: it has
    a shape and a dtype but no values (MXNet printed ``<_Symbol name>`` there)."""
    return f"<_Symbol shape={self.shape} dtype={self.dtype}>"


def _repr(self):
    """As MXNet prints: NumPy's text, the dtype unless float32 (or bool), the device unless
    cpu(0)."""
    if self._is_symbol:
        return _symbol_text(self)
    s = repr(self.asnumpy())
    dt = self.dtype
    if "dtype=" in s:
        if dt == _onp.float32:
            s = s[:s.rindex(",")] + ")"
    elif dt not in (_onp.float32, _onp.bool_):
        s = s[:-1] + f", dtype={dt})"
    ctx = self.ctx
    if ctx != _janus.cpu(0):
        s = s[:-1] + f", ctx={ctx})"
    return s


def _str(self):
    if self._is_symbol:
        return _symbol_text(self)
    s = str(self.asnumpy())
    ctx = self.ctx
    if ctx == _janus.cpu(0) or self.ndim == 0:
        return s
    return f"{s} @{ctx}"


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


def _array_interface(self, dtype=None, copy=None):
    """numpy.array(x) copies (asnumpy); numpy.asarray(x) takes the buffer protocol instead and
    shares x's memory (see ``__dlpack__``)."""
    a = self.asnumpy()
    return a if dtype is None else a.astype(dtype)


def _dlpack(self, stream=None):
    """DLPack export without a copy: a NumPy view of the array's memory (the buffer protocol,
    which first waits for every operation pushed on the array) exports itself. The capsule
    keeps the array's memory alive. Consumers: torch.from_dlpack, numpy.from_dlpack, ...
    Writes pushed on the array later are not ordered with the consumer's use of the memory."""
    if stream is not None:
        raise BufferError("__dlpack__: Janus arrays live on the CPU, which has no streams; "
                          f"got stream={stream!r}")
    return _onp.asarray(memoryview(self)).__dlpack__()


def from_dlpack(x):
    """An array from any object that exports DLPack (``__dlpack__``: PyTorch tensors, NumPy
    arrays, ...) or from a 'dltensor' capsule. A CPU tensor whose layout is row-major and
    compact is shared, not copied: writes through either side are seen by the other, and the
    producer's memory stays alive until the last Janus handle and every operation pushed on
    the array are done. Other layouts (transposed, strided views) are copied once. Writes made
    by the producer are not ordered with Janus operations still pending on the array: wait
    (``wait_to_read``) before writing from the other side."""
    if type(x).__name__ == "PyCapsule":
        return _janus.from_dlpack_capsule(x)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not export DLPack "
                        "(no __dlpack__ method)")
    if hasattr(x, "__dlpack_device__"):
        device_type, device_id = x.__dlpack_device__()
        if int(device_type) not in (1, 3):
            raise _janus_device_error(
                f"from_dlpack: the tensor is on DLPack device type {int(device_type)} "
                f"(id {device_id}), expected the CPU (type 1)")
    return _janus.from_dlpack_capsule(x.__dlpack__())


def _janus_device_error(message):
    from ..base import DeviceError
    return DeviceError(message)


def _flatten(self, order="C"):
    return self.reshape(-1)


def _squeeze(self, axis=None):
    return _janus.squeeze(self, axis)


def _clip(self, a_min=None, a_max=None):
    lo = -_onp.inf if a_min is None else a_min
    hi = _onp.inf if a_max is None else a_max
    return _janus.clip(self, float(lo), float(hi))


ndarray.__getitem__ = _getitem
ndarray.__setitem__ = _setitem
ndarray.__repr__ = _repr
ndarray.__str__ = _str
ndarray.__iter__ = _iter
ndarray.__array__ = _array_interface
ndarray.__dlpack__ = _dlpack
ndarray.__dlpack_device__ = lambda self: (1, 0)  # kDLCPU, device 0: host memory
ndarray.__bool__ = lambda self: bool(self.item())
ndarray.__float__ = lambda self: float(self.item())
ndarray.__int__ = lambda self: int(self.item())
ndarray.__index__ = lambda self: int(self.item())
ndarray.tolist = lambda self: self.asnumpy().tolist()
ndarray.__mod__ = lambda self, other: mod(self, other)
ndarray.__rmod__ = lambda self, other: mod(other, self)
ndarray.__floordiv__ = lambda self, other: floor_divide(self, other)
ndarray.__rfloordiv__ = lambda self, other: floor_divide(other, self)


def _imod(self, other):
    self[...] = mod(self, other)
    return self


def _ifloordiv(self, other):
    self[...] = floor_divide(self, other)
    return self


ndarray.__imod__ = _imod
ndarray.__ifloordiv__ = _ifloordiv
ndarray.flatten = _flatten
ndarray.squeeze = _squeeze
ndarray.clip = _clip
ndarray.as_in_context = ndarray.as_in_ctx
ndarray.as_np_ndarray = lambda self: self
ndarray.as_nd_ndarray = lambda self: self
ndarray.dot = lambda self, b: _janus.dot(self, b)
ndarray.exp = lambda self: _janus.exp(self)
ndarray.log = lambda self: _janus.log(self)
ndarray.sqrt = lambda self: _janus.sqrt(self)
ndarray.abs = lambda self: _janus.abs(self)
ndarray.square = lambda self: _janus.square(self)
ndarray.relu = lambda self: _janus.relu(self)
ndarray.sigmoid = lambda self: _janus.sigmoid(self)
ndarray.softmax = lambda self, axis=-1: _janus.softmax(self, axis)

# Composed of the operators above (janus/numpy/_composed.py). Last: `any` and `all` shadow the
# builtins in this module from here on (the code above calls _builtins.all).
from ._composed import (  # noqa: E402,F401
    all, any, atleast_1d, atleast_2d, column_stack, count_nonzero, cumsum, empty_like, flip, hstack,
    identity, isfinite, isinf, isnan, logical_and, logical_not, logical_or, logical_xor, outer,
    ravel, repeat, std, swapaxes, tile, tril, triu, var, vstack)
from ._einsum import einsum  # noqa: E402,F401

# Sorting and set functions over the sort, argsort and topk operators (janus/numpy/_ordering.py);
# also the array methods sort, argsort and topk.
from ._ordering import (  # noqa: E402,F401
    argsort, searchsorted, sort, take_along_axis, unique)

# Rounding, diagonals, ptp, nonzero positions and more array methods (janus/numpy/_more.py);
# its floor (an operator) replaces the composed one above, which floor_divide and mod then use.
from ._more import (  # noqa: E402,F401
    allclose, argwhere, around, array_equal, array_split, atleast_3d, average, ceil, deg2rad,
    degrees, diag, diagflat, diagonal, diff, dsplit, dstack, fabs, fix, flatnonzero, fliplr, flipud,
    floor, hsplit, inner, isclose, isneginf, isposinf, meshgrid, nan_to_num, nonzero, positive, ptp,
    rad2deg, radians, real, reciprocal, rint, roll, round, round_, take, tensordot, trace, trunc,
    vdot, vsplit)
from ._more import (  # noqa: E402,F401
    NAN, NINF, NZERO, NaN, PINF, PZERO, array_equiv, broadcast_arrays, diag_indices_from,
    ediff1d, finfo, heaviside, indices, min_scalar_type, nancumsum, nanmax, nanmin, nanprod,
    nansum, promote_types, result_type, rollaxis, rot90, tril_indices_from, triu_indices_from)
from ._more import (  # noqa: E402,F401
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, cbrt, cosh, expm1, log2, log10, sinh, tan)
from ._more import (  # noqa: E402,F401
    append, divmod, float_power, in1d, isin, logspace, modf, msort, select, trapz, unravel_index)
from ._more import (  # noqa: E402,F401
    corrcoef, cov, intersect1d, setdiff1d, setxor1d, union1d)
alltrue = all
sometrue = any
product = prod
row_stack = vstack
from ._more import _install_methods  # noqa: E402

_install_methods()
