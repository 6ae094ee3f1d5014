"""``janus.ndarray`` (``mx.nd``): Apache MXNet 1.x's legacy operators, for Gluon code written
before numpy mode (``F.FullyConnected(x, weight, bias, num_hidden=...)``, ``F.SliceChannel``,
``mx.nd.Activation``, ...). They take MXNet's argument names and defaults and keep its
semantics where a numpy function of the same name differs (``sum(axis, exclude)``,
``reshape(shape)`` with the codes 0, -1, -2, -3, -4, ``split(num_outputs, axis=1)``,
``concat(*arrays, dim=1)``, ``transpose(axes=())``, ``dot`` contracting the last axis with the
first). Each runs Janus's operators, so autograd records it and hybridize traces it.

HybridBlock.hybrid_forward's F holds these over the np and npx functions, as MXNet 1.9's F is
``mx.nd`` (``mx.sym`` when hybridized) with or without ``npx.set_np()``. A name that MXNet has
and Janus does not map is an AttributeError that says so. The array constructors (array, zeros,
ones, ...) are numpy's: Janus has one array type."""
import types as _types

from . import _janus
from . import numpy as _np
from . import numpy_extension as _npx
from .base import NotSupportedError as _NotSupportedError

NDArray = _np.ndarray
array = _np.array
zeros = _np.zeros
ones = _np.ones
empty = _np.empty
full = _np.full
arange = _np.arange
eye = _np.eye
waitall = _np.waitall
random = _np.random

__all__ = []  # filled by _op


def _op(*names):
    """Registers the function under MXNet's names; accepts and ignores MXNet's `name` and
    `attr` (a symbol's node name and attributes), which change no number."""
    def register(fn):
        def op(*args, name=None, attr=None, **kwargs):
            return fn(*args, **kwargs)
        op.__name__ = op.__qualname__ = names[0]
        op.__doc__ = fn.__doc__
        for n in names:
            globals()[n] = op
            __all__.append(n)
        return op
    return register


def _ints(value, what, op):
    """A tuple of ints from MXNet's spellings: an int, a tuple or list, () or None."""
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    try:
        out = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: {what} must be an integer or a tuple of integers, got "
                         f"{value!r}") from None
    return out


def _positive(value, what, op):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{op}: {what} must be a positive integer, got {value!r}")
    return value


def _zero_bias(n, like):
    return _np.zeros((n,), dtype=like.dtype, ctx=like.ctx)


# ---- layers -------------------------------------------------------------------------------

@_op("FullyConnected")
def _fully_connected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    """data · weightᵀ + bias; `flatten` first makes data [N, -1], otherwise the last axis is
    contracted. weight is [num_hidden, K]."""
    _positive(num_hidden, "num_hidden", "FullyConnected")
    if weight.ndim != 2 or weight.shape[0] != num_hidden:
        raise ValueError(f"FullyConnected: num_hidden = {num_hidden} but the weight has shape "
                         f"{weight.shape}, expected ({num_hidden}, K)")
    if not no_bias and bias is None:
        raise ValueError("FullyConnected: no bias given (pass one, or no_bias=True)")
    if not flatten:
        y = _np.matmul(data, _janus.transpose(weight, [1, 0]))
        return y if no_bias else y + bias
    x = data if data.ndim == 2 else data.reshape(data.shape[0], -1)
    b = _zero_bias(num_hidden, data) if no_bias else bias
    return _janus.invoke("fully_connected", [x, weight, b], {})[0]


def _softsign(x):
    return x / (_janus.abs(x) + 1.0)


_ACTIVATIONS = {
    "relu": _janus.relu,
    "sigmoid": _janus.sigmoid,
    "tanh": _janus.tanh,
    "softrelu": _janus.softplus,
    "softsign": _softsign,
    "log_sigmoid": lambda x: -_janus.softplus(-x),
    "mish": lambda x: x * _janus.tanh(_janus.softplus(x)),
}


@_op("Activation")
def _activation(data, act_type=None):
    """relu, sigmoid, tanh, softrelu (log(1 + exp x)), softsign, log_sigmoid or mish."""
    fn = _ACTIVATIONS.get(act_type)
    if fn is None:
        raise ValueError(f"Activation: act_type {act_type!r} is not known, expected one of "
                         f"{sorted(_ACTIVATIONS)}")
    return fn(data)


def _elu(x, alpha):
    """x above 0, alpha (exp x - 1) below, built from relu so that both sides differentiate."""
    return _janus.relu(x) + (_janus.exp(-_janus.relu(-x)) - 1.0) * alpha


@_op("LeakyReLU")
def _leaky_relu(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
                upper_bound=0.334):
    """leaky (slope · x below 0), prelu (gamma per channel of axis 1), elu, selu, gelu; rrelu at
    inference (the mean slope)."""
    if act_type == "leaky":
        return _janus.leaky_relu(data, float(slope))
    if act_type == "prelu":
        if gamma is None:
            raise ValueError("LeakyReLU: act_type 'prelu' needs gamma")
        g = gamma.reshape((1, -1) + (1,) * (data.ndim - 2)) if data.ndim > 1 else gamma
        return _janus.relu(data) - _janus.relu(-data) * g
    if act_type == "elu":
        return _elu(data, float(slope))
    if act_type == "selu":
        return _elu(data, 1.6732632423543772) * 1.0507009873554805
    if act_type == "gelu":
        return _janus.gelu(data)
    if act_type == "rrelu":
        from .autograd import is_training
        if is_training():
            raise _NotSupportedError("LeakyReLU: act_type 'rrelu' draws random slopes in "
                                     "training, which Janus does not implement")
        return _janus.leaky_relu(data, (float(lower_bound) + float(upper_bound)) / 2)
    raise ValueError(f"LeakyReLU: act_type {act_type!r} is not known, expected one of "
                     "['elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu']")


def _spatial(value, dims, fallback, what):
    v = _ints(value, what, "Convolution")
    if not v:
        return (fallback,) * dims
    if len(v) == 1:
        return v * dims
    if len(v) != dims:
        raise ValueError(f"Convolution: {what} = {v}, expected {dims} values like the kernel")
    return v


@_op("Convolution")
def _convolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(),
                 num_filter=None, num_group=1, no_bias=False, layout=None, workspace=1024,
                 cudnn_tune=None, cudnn_off=False):
    """A 1-D to 3-D convolution over NC(D)(H)W; weight [num_filter, C / num_group, *kernel]."""
    kernel = _ints(kernel, "kernel", "Convolution")
    if not 1 <= len(kernel) <= 3:
        raise ValueError(f"Convolution: kernel = {kernel}, expected 1 to 3 extents")
    _positive(num_filter, "num_filter", "Convolution")
    dims = len(kernel)
    if layout not in (None, ("NCW", "NCHW", "NCDHW")[dims - 1]):
        raise _NotSupportedError(f"Convolution: layout {layout!r} is not supported (channels "
                                 "first only)")
    if tuple(weight.shape[2:]) != kernel or weight.shape[0] != num_filter:
        raise ValueError(f"Convolution: the weight has shape {weight.shape}, expected "
                         f"({num_filter}, C / num_group, {', '.join(map(str, kernel))})")
    if not no_bias and bias is None:
        raise ValueError("Convolution: no bias given (pass one, or no_bias=True)")
    b = _zero_bias(num_filter, data) if no_bias else bias
    attrs = {"stride": _spatial(stride, dims, 1, "stride"),
             "padding": _spatial(pad, dims, 0, "pad"),
             "dilation": _spatial(dilate, dims, 1, "dilate"), "groups": int(num_group)}
    return _janus.invoke(f"conv{dims}d", [data, weight, b], attrs)[0]


@_op("Deconvolution")
def _deconvolution(data, weight, bias=None, kernel=None, stride=(), dilate=(), pad=(), adj=(),
                   target_shape=(), num_filter=None, num_group=1, no_bias=True, layout=None,
                   workspace=512, cudnn_tune=None, cudnn_off=False):
    """The transposed convolution (1-D to 3-D) with adj as the output padding; weight
    [C, num_filter / num_group, *kernel]. No bias unless no_bias=False (MXNet's default)."""
    kernel = _ints(kernel, "kernel", "Deconvolution")
    if not 1 <= len(kernel) <= 3:
        raise ValueError(f"Deconvolution: kernel = {kernel}, expected 1 to 3 extents")
    _positive(num_filter, "num_filter", "Deconvolution")
    if _ints(target_shape, "target_shape", "Deconvolution"):
        raise _NotSupportedError("Deconvolution: target_shape is not supported (give pad and "
                                 "adj)")
    dims = len(kernel)
    if tuple(weight.shape[2:]) != kernel or weight.shape[1] * num_group != num_filter:
        raise ValueError(f"Deconvolution: the weight has shape {weight.shape}, expected "
                         f"(C, {num_filter} / num_group, {', '.join(map(str, kernel))})")
    if not no_bias and bias is None:
        raise ValueError("Deconvolution: no bias given (pass one, or no_bias=True)")
    b = _zero_bias(num_filter, data) if no_bias else bias
    attrs = {"stride": _spatial(stride, dims, 1, "stride"),
             "padding": _spatial(pad, dims, 0, "pad"),
             "dilation": _spatial(dilate, dims, 1, "dilate"), "groups": int(num_group),
             "output_padding": _spatial(adj, dims, 0, "adj")}
    return _janus.invoke(f"conv{dims}d_transpose", [data, weight, b], attrs)[0]


@_op("Pooling")
def _pooling(data, kernel=(), pool_type="max", global_pool=False, stride=(), pad=(),
             pooling_convention="valid", count_include_pad=True, layout=None, cudnn_off=False,
             p_value=None):
    """max or avg pooling over NCHW (or over every spatial axis with global_pool)."""
    if pool_type not in ("max", "avg"):
        raise _NotSupportedError(f"Pooling: pool_type {pool_type!r} is not supported (max, avg)")
    if global_pool:
        axes = tuple(range(2, data.ndim))
        return (_np.max if pool_type == "max" else _np.mean)(data, axis=axes, keepdims=True)
    if data.ndim != 4 or layout not in (None, "NCHW"):
        raise _NotSupportedError(f"Pooling: only 2-D pooling over NCHW is supported, got "
                                 f"{data.ndim}-d data with layout {layout!r}")
    if pooling_convention not in ("valid", "full"):
        raise _NotSupportedError(f"Pooling: pooling_convention {pooling_convention!r} is not "
                                 "supported (valid, full)")
    kernel = _ints(kernel, "kernel", "Pooling")
    if len(kernel) != 2:
        raise ValueError(f"Pooling: kernel = {kernel}, expected (height, width)")
    attrs = {"kernel_size": kernel, "stride": _spatial(stride, 2, 1, "stride"),
             "padding": _spatial(pad, 2, 0, "pad"), "ceil_mode": pooling_convention == "full"}
    if pool_type == "avg":
        attrs["count_include_pad"] = bool(count_include_pad)
    return _janus.invoke(f"{pool_type}_pool2d", [data], attrs)[0]


@_op("BatchNorm")
def _batch_norm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
                cudnn_off=False, min_calib_range=None, max_calib_range=None):
    """Normalized per channel of `axis`: in training (autograd.record(train_mode=True)) by the
    batch's statistics, which update moving_mean and moving_var in place; otherwise by those.
    fix_gamma reads gamma as 1."""
    from .autograd import is_training
    if output_mean_var:
        raise _NotSupportedError("BatchNorm: output_mean_var=True is not supported")
    if fix_gamma:
        gamma = _np.ones_like(gamma)
    training = is_training() and not use_global_stats
    return _janus.invoke("batch_norm", [data, gamma, beta, moving_mean, moving_var],
                         {"eps": float(eps), "momentum": float(momentum), "training": training,
                          "axis": int(axis)})[0]


@_op("LayerNorm")
def _layer_norm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    """Normalized over the last axis, then scaled by gamma and shifted by beta."""
    if axis not in (-1, data.ndim - 1):
        raise _NotSupportedError(f"LayerNorm: axis = {axis} is not supported (the last axis)")
    if output_mean_var:
        raise _NotSupportedError("LayerNorm: output_mean_var=True is not supported")
    return _janus.invoke("layer_norm", [data, gamma, beta], {"eps": float(eps)})[0]


@_op("Embedding")
def _embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",
               sparse_grad=False):
    """The rows weight[data] (data holds the indices, in any dtype)."""
    _positive(input_dim, "input_dim", "Embedding")
    _positive(output_dim, "output_dim", "Embedding")
    if tuple(weight.shape) != (input_dim, output_dim):
        raise ValueError(f"Embedding: the weight has shape {weight.shape}, expected "
                         f"({input_dim}, {output_dim}) from input_dim and output_dim")
    return _janus.invoke("embedding", [data.astype("int64"), weight], {})[0]


@_op("Dropout")
def _dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False):
    """Zeroes elements with probability p (scaling the rest by 1 / (1 - p)) in training or with
    mode='always'; the identity otherwise."""
    if _ints(axes, "axes", "Dropout"):
        raise _NotSupportedError("Dropout: axes (a mask shared along axes) is not supported")
    return _npx.dropout(data, p=p, mode=mode)


@_op("softmax")
def _softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
    if use_length:
        raise _NotSupportedError("softmax: use_length=True is not supported")
    return _npx.softmax(data, axis=axis, temperature=temperature)


@_op("log_softmax")
def _log_softmax(data, axis=-1, temperature=None, dtype=None, use_length=False):
    if use_length:
        raise _NotSupportedError("log_softmax: use_length=True is not supported")
    return _npx.log_softmax(data, axis=axis, temperature=temperature)


# ---- shapes -------------------------------------------------------------------------------

@_op("Flatten", "flatten")
def _flatten(data):
    """[N, ...] -> [N, product of the rest]."""
    return _janus.flatten(data)


@_op("Reshape", "reshape")
def _reshape(data, shape=None, reverse=False, target_shape=None, keep_highest=False):
    """data in `shape`, with MXNet's codes (0 copies an axis, -1 is inferred, -2 copies the
    rest, -3 merges two axes, -4 splits one into the next two values); reverse matches the codes
    against the axes from the last. The mxnet_reshape operator resolves them, as for an imported
    MXNet graph."""
    if target_shape or keep_highest:
        raise _NotSupportedError("Reshape: target_shape and keep_highest (deprecated) are not "
                                 "supported")
    codes = _ints(shape, "shape", "Reshape")
    if not codes:
        raise ValueError("Reshape: no target shape given")
    return _janus.invoke("mxnet_reshape", [data], {"shape": list(codes),
                                                   "reverse": bool(reverse)})[0]


@_op("SliceChannel", "split")
def _split(data, num_outputs=None, axis=1, squeeze_axis=False):
    """num_outputs equal parts along axis (a list; one array when num_outputs is 1)."""
    _positive(num_outputs, "num_outputs", "SliceChannel")
    axis = axis % data.ndim
    extent = data.shape[axis]
    if extent % num_outputs:
        raise ValueError(f"SliceChannel: axis {axis} of {data.shape} has extent {extent}, which "
                         f"num_outputs = {num_outputs} does not divide")
    step = extent // num_outputs
    if squeeze_axis and step != 1:
        raise ValueError(f"SliceChannel: squeeze_axis needs parts of extent 1, got {step}")
    parts = [_janus.slice_axis(data, axis, k * step, (k + 1) * step) for k in range(num_outputs)]
    if squeeze_axis:
        parts = [_janus.squeeze(p, [axis]) for p in parts]
    return parts[0] if num_outputs == 1 else parts


@_op("Concat", "concat")
def _concat(*data, dim=1, num_args=None):
    """The arrays joined along dim."""
    if not data:
        raise ValueError("Concat: no arrays given")
    return _np.concatenate(list(data), axis=dim)


@_op("stack")
def _stack(*data, axis=0, num_args=None):
    return _np.stack(list(data), axis=axis)


@_op("transpose")
def _transpose(data, axes=()):
    """The axes permuted (reversed when axes is empty)."""
    axes = _ints(axes, "axes", "transpose")
    return _janus.transpose(data, list(axes) if axes else list(range(data.ndim))[::-1])


@_op("SwapAxis", "swapaxes")
def _swapaxes(data, dim1=0, dim2=0):
    perm = list(range(data.ndim))
    perm[dim1], perm[dim2] = perm[dim2], perm[dim1]
    return _janus.transpose(data, perm)


@_op("expand_dims")
def _expand_dims(data, axis):
    return _np.expand_dims(data, axis)


@_op("squeeze")
def _squeeze(data, axis=None):
    return _np.squeeze(data, axis)


@_op("slice_axis")
def _slice_axis(data, axis, begin, end):
    """data[begin:end] along axis (end None: to the end; negative: from the end)."""
    n = data.shape[axis]
    begin = begin + n if begin < 0 else begin
    end = n if end is None else (end + n if end < 0 else end)
    return _janus.slice_axis(data, axis, begin, end)


@_op("broadcast_to")
def _broadcast_to(data, shape=None):
    """data broadcast to shape; a 0 keeps data's extent."""
    shape = _ints(shape, "shape", "broadcast_to")
    return _janus.broadcast_to(data, tuple(d if s == 0 else s for s, d in zip(shape, data.shape)))


# ---- reductions, products, elementwise ------------------------------------------------------

def _reduction(name, fn):
    def reduce(data, axis=(), keepdims=False, exclude=False):
        axes = _ints(axis, "axis", name)
        if exclude:
            axes = tuple(a for a in range(data.ndim) if a not in {x % data.ndim for x in axes})
        y = fn(data, axis=axes if axes or exclude else None, keepdims=keepdims)
        return y.reshape(1) if y.ndim == 0 else y  # legacy arrays have at least one axis
    reduce.__doc__ = (f"{name} over axis (every axis when empty; every other one with "
                      "exclude); shape (1,) rather than () when every axis goes.")
    _op(name)(reduce)


for _name in ["sum", "mean", "max", "min", "prod"]:
    _reduction(_name, getattr(_np, _name))


@_op("clip")
def _clip(data, a_min, a_max):
    return _janus.clip(data, float(a_min), float(a_max))


@_op("dot")
def _dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """The last axis of lhs (its first with transpose_a) contracted with the first of rhs (its
    last with transpose_b)."""
    if transpose_a:
        lhs = _janus.transpose(lhs, list(range(1, lhs.ndim)) + [0])
    if transpose_b:
        rhs = _janus.transpose(rhs, [rhs.ndim - 1] + list(range(rhs.ndim - 1)))
    if lhs.ndim <= 2 and rhs.ndim <= 2:
        return _np.dot(lhs, rhs)
    k = lhs.shape[-1]
    y = _np.dot(lhs.reshape(-1, k), rhs.reshape(k, -1))
    return y.reshape(tuple(lhs.shape[:-1]) + tuple(rhs.shape[1:]))


@_op("batch_dot")
def _batch_dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """Matrix products over the leading (batch) axes."""
    if transpose_a:
        lhs = _swapaxes(lhs, dim1=lhs.ndim - 1, dim2=lhs.ndim - 2)
    if transpose_b:
        rhs = _swapaxes(rhs, dim1=rhs.ndim - 1, dim2=rhs.ndim - 2)
    return _np.matmul(lhs, rhs)


@_op("add_n", "ElementWiseSum")
def _add_n(*args, num_args=None):
    y = args[0]
    for a in args[1:]:
        y = y + a
    return y


def _elemwise(name, fn):
    def elemwise(lhs, rhs):
        if tuple(lhs.shape) != tuple(rhs.shape):
            raise ValueError(f"{name}: the shapes {lhs.shape} and {rhs.shape} differ (elemwise "
                             f"operators do not broadcast; use broadcast_{name.split('_')[1]})")
        return fn(lhs, rhs)
    _op(name)(elemwise)


for _name, _fn in [("elemwise_add", _np.add), ("elemwise_sub", _np.subtract),
                   ("elemwise_mul", _np.multiply), ("elemwise_div", _np.divide)]:
    _elemwise(_name, _fn)
for _names, _fn in [(("broadcast_add", "broadcast_plus"), _np.add),
                    (("broadcast_sub", "broadcast_minus"), _np.subtract),
                    (("broadcast_mul",), _np.multiply), (("broadcast_div",), _np.divide),
                    (("broadcast_maximum",), _np.maximum), (("broadcast_minimum",), _np.minimum),
                    (("broadcast_power",), _np.power)]:
    _op(*_names)(lambda lhs, rhs, _fn=_fn: _fn(lhs, rhs))
for _name in ["exp", "log", "log1p", "sqrt", "square", "abs", "sign", "negative", "sin", "cos",
              "tanh", "erf", "sigmoid", "relu", "zeros_like", "ones_like"]:
    _op(_name)(lambda data, _fn=getattr(_np, _name, None) or getattr(_npx, _name): _fn(data))
_op("rsqrt")(lambda data: _janus.rsqrt(data))
_op("reciprocal")(lambda data: 1.0 / data)
_op("BlockGrad", "stop_gradient")(lambda data: _janus.invoke("stop_gradient", [data], {})[0])
_op("Cast", "cast")(lambda data, dtype: data.astype(dtype))


@_op("take")
def _take(a, indices, axis=0, mode="clip"):
    """The slices of a at indices (any dtype) along axis."""
    if mode != "clip":
        raise _NotSupportedError(f"take: mode {mode!r} is not supported (clip)")
    return _np.take(a, indices.astype("int64"), axis=axis)


@_op("where")
def _where(condition, x, y):
    """x where condition is nonzero, else y."""
    return _np.where(condition != 0, x, y)


@_op("one_hot")
def _one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    y = _npx.one_hot(indices.astype("int64"), depth, dtype)
    return y if (on_value, off_value) == (1.0, 0.0) else y * (on_value - off_value) + off_value


@_op("pick")
def _pick(data, index, axis=-1, keepdims=False, mode="clip"):
    return _npx.pick(data, index, axis=axis, keepdims=keepdims)



# Ordering with MXNet 1.x's names and defaults: is_ascend instead of NumPy's order, positions in
# float32 unless dtype says otherwise, axis=None for the flattened array.
@_op("sort")
def _sort(data, axis=-1, is_ascend=True):
    data, axis = (data.reshape(-1), 0) if axis is None else (data, axis)
    return _janus.invoke("sort", [data], {"axis": axis, "descending": not is_ascend})[0]


@_op("argsort")
def _argsort(data, axis=-1, is_ascend=True, dtype="float32"):
    data, axis = (data.reshape(-1), 0) if axis is None else (data, axis)
    return _janus.invoke("argsort", [data], {"axis": axis, "descending": not is_ascend,
                                             "dtype": dtype})[0]


@_op("topk")
def _topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    return _npx.topk(data, axis, k, ret_typ, is_ascend, dtype)


def _arg(name):
    def arg(data, axis=None, keepdims=False):
        """The index of the extreme along axis, as float32 (MXNet's legacy dtype)."""
        return getattr(_np, name)(data, axis=axis, keepdims=keepdims).astype("float32")
    _op(name)(arg)


_arg("argmax")
_arg("argmin")

# The scalar operators, as MXNet keeps them (mx.nd._internal) and by name.
_SCALARS = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_power_scalar": lambda x, s: x ** s, "_rpower_scalar": lambda x, s: s ** x,
    "_maximum_scalar": lambda x, s: _np.maximum(x, s),
    "_minimum_scalar": lambda x, s: _np.minimum(x, s),
}
for _name, _fn in _SCALARS.items():
    _op(_name)(lambda data, scalar=None, is_int=None, _fn=_fn: _fn(data, float(scalar)))
_internal = _types.SimpleNamespace(**{n: globals()[n] for n in _SCALARS})
del _name, _fn, _names

from . import _legacy_ops  # noqa: E402,F401 (registers more operators through _op)


def __getattr__(name):
    raise AttributeError(f"janus.ndarray has no attribute '{name}': Janus has no such legacy "
                         f"MXNet operator (mx.nd.{name})")
