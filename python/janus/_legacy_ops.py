"""More of MXNet 1.x's legacy operators for ``mx.nd`` and hybrid_forward's ``F`` (registered
into janus.ndarray by its ``_op``): the output layers with MXNet's own gradients
(``SoftmaxOutput``, the regression outputs, ``MakeLoss``), normalizations, resampling, slicing
and elementwise functions. Each is composed of Janus's operators, so autograd records it and
hybridize traces it.

The output layers' gradients are MXNet's (``softmax - onehot(label)`` scaled and normalized,
...), made by adding ``x * G - stop_gradient(x * G)`` (zero) to the output under stop_gradient, with
G under stop_gradient too: backward then gives G times the head gradient. MXNet ignores the
head gradient; the two agree for ``backward()`` with its default head of ones, which is how
these layers end a network. (SoftmaxOutput's ``out_grad=True`` is not supported.)"""
import math as _math

from . import _janus
from . import numpy as _np
from . import numpy_extension as _npx
from .base import NotSupportedError as _NotSupportedError
from .ndarray import _ints, _op


def _stop(x):
    """x with no gradient: the stop_gradient operator, which a hybridized graph keeps (it cannot
    see NDArray.detach), detached so that the imperative tape does not follow it either."""
    return _janus.invoke("stop_gradient", [x], {})[0].detach()


def _with_gradient(value, x, grad):
    """``value`` (with no gradient of its own) whose gradient with respect to ``x`` is ``grad``
    times the head gradient."""
    xg = x * _stop(grad)
    return _stop(value) + (xg - _stop(xg))


def _prod(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


# ---- output layers ------------------------------------------------------------------------

_NORMALIZATIONS = ("null", "batch", "valid")


@_op("SoftmaxOutput", "Softmax")
def _softmax_output(data, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                    use_ignore=False, preserve_shape=False, normalization="null",
                    out_grad=False, smooth_alpha=0.0):
    """softmax over the classes (axis 1 with multi_output, else the last axis of [N, C] data or,
    with preserve_shape, of any data); its gradient is MXNet's (softmax - target) x grad_scale /
    norm, target the one-hot label (smoothed by smooth_alpha over the other classes), zero where
    use_ignore and label == ignore_label. norm: 'null' 1 (the spatial size with multi_output),
    'batch' the number of labels, 'valid' the number of labels not ignored."""
    if out_grad:
        raise _NotSupportedError("SoftmaxOutput: out_grad=True is not supported")
    if normalization not in _NORMALIZATIONS:
        raise ValueError(f"SoftmaxOutput: normalization {normalization!r} is not known, "
                         f"expected one of {list(_NORMALIZATIONS)}")
    if multi_output:
        axis = 1
        want = (data.shape[0],) + tuple(data.shape[2:])
    elif preserve_shape or data.ndim == 2:
        axis = data.ndim - 1
        want = tuple(data.shape[:-1])
    else:
        raise _NotSupportedError(f"SoftmaxOutput: data of shape {data.shape} needs "
                                 "multi_output=True (classes on axis 1) or preserve_shape=True "
                                 "(classes on the last axis); MXNet's flattening of other "
                                 "data is not supported")
    if tuple(label.shape) != want:
        raise ValueError(f"SoftmaxOutput: label has shape {label.shape}, expected {want} for "
                         f"data of shape {data.shape}")
    classes = data.shape[axis]
    s = _npx.softmax(data, axis=axis)
    lab = label.astype(data.dtype)
    valid = (lab != float(ignore_label)).astype(data.dtype) if use_ignore else \
        _np.ones_like(lab)
    index = (lab * valid).astype("int64")
    target = _npx.one_hot(index, classes, data.dtype)
    if smooth_alpha:
        a = float(smooth_alpha)
        target = target * (1.0 - a) + (1.0 - target) * (a / (classes - 1))
    if multi_output:
        target = _np.moveaxis(target, -1, 1)
    grad = (s - target) * _np.expand_dims(valid, axis)
    if normalization == "valid":
        norm = _np.maximum(_np.sum(valid), 1.0)
        grad = grad * (float(grad_scale) / norm)
    else:
        spatial = _prod(data.shape[2:]) if multi_output else 1
        count = spatial if normalization == "null" else _prod(want)
        grad = grad * (float(grad_scale) / count)
    return _with_gradient(s, data, grad)


def _regression(name, forward, gradient):
    def regression(data, label, grad_scale=1.0):
        if label.size != data.size:
            raise ValueError(f"{name}: label has shape {label.shape}, expected the "
                             f"{data.size} elements of data's shape {data.shape}")
        lab = label.reshape(data.shape).astype(data.dtype)
        out = forward(data)
        num_output = data.size // data.shape[0] if data.ndim else 1
        grad = gradient(_stop(out), lab) * (float(grad_scale) / num_output)
        return _with_gradient(out, data, grad)
    regression.__doc__ = (f"{name}: the forward output, with MXNet's gradient (scaled by "
                          "grad_scale / the number of outputs per sample).")
    _op(name)(regression)


_regression("LinearRegressionOutput", lambda x: x, lambda out, lab: out - lab)
_regression("LogisticRegressionOutput", _janus.sigmoid, lambda out, lab: out - lab)
_regression("MAERegressionOutput", lambda x: x, lambda out, lab: _np.sign(out - lab))


@_op("MakeLoss", "make_loss")
def _make_loss(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    """data, with gradient grad_scale (divided by the batch size for 'batch', by the number of
    elements above valid_thresh for 'valid')."""
    if normalization not in _NORMALIZATIONS:
        raise ValueError(f"MakeLoss: normalization {normalization!r} is not known, expected "
                         f"one of {list(_NORMALIZATIONS)}")
    grad = _np.ones_like(data) * float(grad_scale)
    if normalization == "batch":
        grad = grad / data.shape[0]
    elif normalization == "valid":
        count = _np.sum((data > float(valid_thresh)).astype(data.dtype))
        grad = grad / _np.maximum(count, 1.0)
    return _with_gradient(data, data, grad)


@_op("softmax_cross_entropy")
def _softmax_cross_entropy(data, label):
    """The summed cross entropy of softmax(data) [N, C] against class indices label [N], shape
    (1,)."""
    logp = _npx.log_softmax(data, axis=-1)
    return -_npx.pick(logp, label.astype("int64"), axis=-1).sum().reshape(1)


@_op("SoftmaxActivation")
def _softmax_activation(data, mode="instance"):
    """softmax over everything but the first axis ('instance') or over axis 1 ('channel')."""
    if mode == "channel":
        return _npx.softmax(data, axis=1)
    if mode != "instance":
        raise ValueError(f"SoftmaxActivation: mode {mode!r} is not known, expected 'instance' "
                         "or 'channel'")
    return _npx.softmax(data.reshape(data.shape[0], -1), axis=-1).reshape(data.shape)


# ---- normalizations -----------------------------------------------------------------------

@_op("norm")
def _norm(data, ord=2, axis=None, out_dtype=None, keepdims=False):
    """The L1 (ord=1) or L2 (ord=2) norm over axis (every axis when None: shape (1,))."""
    if ord not in (1, 2):
        raise ValueError(f"norm: ord = {ord!r}, expected 1 or 2")
    axes = _ints(axis, "axis", "norm") or None
    y = _np.sum(_np.abs(data), axis=axes, keepdims=keepdims) if ord == 1 else \
        _np.sqrt(_np.sum(data * data, axis=axes, keepdims=keepdims))
    y = y.reshape(1) if y.ndim == 0 else y
    return y if out_dtype is None else y.astype(out_dtype)


@_op("L2Normalization")
def _l2_normalization(data, eps=1e-10, mode="instance"):
    """data / sqrt(sum(data^2) + eps), the sum over every axis but the first ('instance'), over
    axis 1 ('channel') or over the axes after 1 ('spatial')."""
    axes = {"instance": tuple(range(1, data.ndim)), "channel": (1,),
            "spatial": tuple(range(2, data.ndim))}.get(mode)
    if axes is None:
        raise ValueError(f"L2Normalization: mode {mode!r} is not known, expected 'instance', "
                         "'channel' or 'spatial'")
    return data / _np.sqrt(_np.sum(data * data, axis=axes, keepdims=True) + float(eps))


def _standardize(x, axes, eps):
    mean = _np.mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = _np.mean(centered * centered, axis=axes, keepdims=True)
    return centered / _np.sqrt(var + float(eps))


@_op("InstanceNorm")
def _instance_norm(data, gamma, beta, eps=1e-3):
    """Each (sample, channel) normalized over the axes after 1, then gamma and beta per
    channel."""
    shape = (1, -1) + (1,) * (data.ndim - 2)
    y = _standardize(data, tuple(range(2, data.ndim)), eps)
    return y * gamma.reshape(shape) + beta.reshape(shape)


@_op("GroupNorm")
def _group_norm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    """The channels (axis 1) in num_groups groups, each normalized per sample over its channels
    and the axes after; gamma and beta per group (MXNet 1.9's shapes)."""
    if output_mean_var:
        raise _NotSupportedError("GroupNorm: output_mean_var=True is not supported")
    n, c = data.shape[0], data.shape[1]
    if c % num_groups:
        raise ValueError(f"GroupNorm: {c} channels do not divide into num_groups = "
                         f"{num_groups}")
    grouped = data.reshape((n, num_groups, -1))
    y = _standardize(grouped, (2,), eps)
    y = y * gamma.reshape(1, num_groups, 1) + beta.reshape(1, num_groups, 1)
    return y.reshape(data.shape)


@_op("moments")
def _moments(data, axes=None, keepdims=False):
    """[mean, variance] over axes (every axis when None)."""
    ax = _ints(axes, "axes", "moments") or None
    mean = _np.mean(data, axis=ax, keepdims=True)
    centered = data - mean
    var = _np.mean(centered * centered, axis=ax, keepdims=keepdims)
    return [mean if keepdims else _np.mean(data, axis=ax), var]


@_op("smooth_l1")
def _smooth_l1(data, scalar=1.0):
    """0.5 (sigma x)^2 where |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2 (sigma = scalar)."""
    s2 = float(scalar) ** 2
    a = _np.abs(data)
    return _np.where(_stop(a) < 1.0 / s2, data * data * (0.5 * s2), a - 0.5 / s2)


# ---- resampling, shapes, slicing ----------------------------------------------------------

@_op("tile")
def _tile(data, reps):
    return _np.tile(data, _ints(reps, "reps", "tile"))


@_op("repeat")
def _repeat(data, repeats, axis=None):
    return _np.repeat(data, int(repeats), axis=axis)


@_op("reverse", "flip")
def _reverse(data, axis):
    return _np.flip(data, _ints(axis, "axis", "reverse"))


def _nearest(x, fy, fx):
    return _np.repeat(_np.repeat(x, fy, axis=2), fx, axis=3)


def _bilinear(data, scale, num_filter):
    """MXNet's bilinear UpSampling: a deconvolution of each channel by its own kernel (the
    weight input, [C, 1, k, k] with k = 2 scale - scale % 2; MXNet's initializer fills it with
    a bilinear kernel), stride scale, padding ceil((scale - 1) / 2)."""
    from . import ndarray as _nd
    if len(data) != 2:
        raise ValueError(f"UpSampling: sample_type 'bilinear' takes data and weight, got "
                         f"{len(data)} inputs")
    x, weight = data
    channels = x.shape[1]
    if num_filter != channels:
        raise ValueError(f"UpSampling: num_filter = {num_filter}, expected the data's "
                         f"{channels} channels for sample_type 'bilinear'")
    k = 2 * scale - scale % 2
    pad = scale // 2  # ceil((scale - 1) / 2)
    return _nd.Deconvolution(x, weight, kernel=(k, k), stride=(scale, scale), pad=(pad, pad),
                             num_filter=channels, num_group=channels, no_bias=True)


@_op("UpSampling")
def _upsampling(*data, scale=None, num_filter=0, sample_type="nearest",
                multi_input_mode="concat", num_args=1, workspace=512):
    """Nearest-neighbour upsampling of NCHW inputs by scale (each further input by what brings
    it to the first's size x scale), joined along the channels ('concat') or summed ('sum');
    or bilinear (data and weight, see _bilinear)."""
    scale = int(scale) if scale is not None else 0
    if scale < 1:
        raise ValueError(f"UpSampling: scale = {scale}, expected an integer >= 1")
    if sample_type == "bilinear":
        return _bilinear(data, scale, num_filter)
    if sample_type != "nearest":
        raise ValueError(f"UpSampling: sample_type {sample_type!r} is not known, expected "
                         "'nearest' or 'bilinear'")
    if not data or any(x.ndim != 4 for x in data):
        raise ValueError("UpSampling: expected NCHW inputs, got shapes "
                         f"{[tuple(x.shape) for x in data]}")
    h, w = data[0].shape[2] * scale, data[0].shape[3] * scale
    outs = []
    for x in data:
        if h % x.shape[2] or w % x.shape[3]:
            raise ValueError(f"UpSampling: an input of shape {x.shape} does not scale to "
                             f"{h}x{w} by an integer factor")
        outs.append(_nearest(x, h // x.shape[2], w // x.shape[3]))
    if multi_input_mode == "sum":
        y = outs[0]
        for o in outs[1:]:
            y = y + o
        return y
    if multi_input_mode != "concat":
        raise ValueError(f"UpSampling: multi_input_mode {multi_input_mode!r} is not known, "
                         "expected 'concat' or 'sum'")
    return outs[0] if len(outs) == 1 else _np.concatenate(outs, axis=1)


@_op("slice")
def _slice(data, begin, end, step=()):
    """data[begin:end:step] per axis (None: the whole axis or step 1); the axes after those
    given are whole."""
    begin, end, step = tuple(begin), tuple(end), tuple(step or ())
    if len(begin) != len(end) or len(begin) > data.ndim or (step and len(step) != len(begin)):
        raise ValueError(f"slice: begin {begin}, end {end} and step {step} must have one "
                         f"entry per axis (at most {data.ndim})")
    key = tuple(slice(b, e, step[i] if step else None) for i, (b, e) in enumerate(zip(begin, end)))
    return data[key]


@_op("slice_like")
def _slice_like(data, shape_like, axes=()):
    """data cut to shape_like's extents on axes (every axis when empty): Janus's slice_like."""
    axes = list(_ints(axes, "axes", "slice_like"))
    return _janus.invoke("slice_like", [data, shape_like], {"axes": axes})[0]


_op("reshape_like")(_npx.reshape_like)


@_op("broadcast_like")
def _broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    """lhs broadcast to rhs's shape (on lhs_axes only, to rhs's extents on rhs_axes)."""
    if lhs_axes is None:
        return _janus.broadcast_to(lhs, tuple(rhs.shape))
    shape = list(lhs.shape)
    for la, ra in zip(_ints(lhs_axes, "lhs_axes", "broadcast_like"),
                      _ints(rhs_axes, "rhs_axes", "broadcast_like")):
        shape[la] = rhs.shape[ra]
    return _janus.broadcast_to(lhs, tuple(shape))


@_op("broadcast_axis", "broadcast_axes")
def _broadcast_axis(data, axis=(), size=()):
    """The axes of extent 1 in axis broadcast to size."""
    shape = list(data.shape)
    for a, s in zip(_ints(axis, "axis", "broadcast_axis"), _ints(size, "size", "broadcast_axis")):
        if shape[a] != 1:
            raise ValueError(f"broadcast_axis: axis {a} of {tuple(data.shape)} has extent "
                             f"{shape[a]}, expected 1")
        shape[a] = s
    return _janus.broadcast_to(data, tuple(shape))


def _edge_pad(x, widths):
    for axis, (before, after) in enumerate(widths):
        parts = []
        if before:
            parts.append(_np.repeat(_janus.slice_axis(x, axis, 0, 1), before, axis=axis))
        parts.append(x)
        if after:
            n = x.shape[axis]
            parts.append(_np.repeat(_janus.slice_axis(x, axis, n - 1, n), after, axis=axis))
        x = parts[0] if len(parts) == 1 else _np.concatenate(parts, axis=axis)
    return x


@_op("Pad", "pad")
def _pad(data, mode="constant", pad_width=(), constant_value=0.0):
    """data padded by pad_width (before and after for each axis, the first two 0) with
    constant_value ('constant') or copies of the border ('edge')."""
    flat = _ints(pad_width, "pad_width", "Pad")
    if len(flat) != 2 * data.ndim:
        raise ValueError(f"Pad: pad_width has {len(flat)} values, expected {2 * data.ndim} "
                         f"(two per axis of {tuple(data.shape)})")
    widths = [(flat[2 * i], flat[2 * i + 1]) for i in range(data.ndim)]
    if mode == "constant":
        return _np.pad(data, widths, constant_values=constant_value)
    if mode == "edge":
        return _edge_pad(data, widths)
    raise _NotSupportedError(f"Pad: mode {mode!r} is not supported (constant, edge)")


@_op("gather_nd")
def _gather_nd(data, indices):
    """data[indices[0], indices[1], ...]: indices [M, ...] index data's first M axes (Janus's
    gather_nd, with the positions truncated to int64 as MXNet reads them)."""
    return _janus.invoke("gather_nd", [data, indices.astype("int64")], {})[0]


@_op("diag")
def _diag(data, k=0, axis1=0, axis2=1):
    """The k-th diagonal of a matrix, or the matrix with a vector on its k-th diagonal."""
    k = int(k)
    if data.ndim == 1:
        n = data.shape[0]
        m = data.reshape(n, 1) * _np.eye(n, dtype=data.dtype, ctx=data.ctx)
        a = abs(k)
        widths = [(0, a), (a, 0)] if k > 0 else [(a, 0), (0, a)]
        return m if k == 0 else _np.pad(m, widths)
    if data.ndim != 2 or (axis1, axis2) != (0, 1):
        raise _NotSupportedError("diag: only 1-D and 2-D data (axis1=0, axis2=1) are supported")
    rows, cols = data.shape
    x = data[:, k:] if k >= 0 else data[-k:, :]
    n = max(0, min(x.shape[0], x.shape[1]))
    return _np.einsum("ii->i", x[:n, :n])


# ---- sequences ----------------------------------------------------------------------------

def _lengths(sequence_length, op):
    if sequence_length is None:
        raise ValueError(f"{op}: use_sequence_length=True needs sequence_length")
    return sequence_length.astype("int64")


@_op("SequenceMask")
def _sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    return _npx.sequence_mask(data, sequence_length, use_sequence_length, value=value,
                              axis=axis)


@_op("SequenceLast")
def _sequence_last(data, sequence_length=None, use_sequence_length=False, axis=0):
    """The last step of each sequence along axis (0 or 1): its last element, or element
    sequence_length - 1 of each batch entry."""
    if axis not in (0, 1):
        raise ValueError(f"SequenceLast: axis = {axis}, expected 0 or 1")
    steps = data.shape[axis]
    if not use_sequence_length:
        return _np.squeeze(_janus.slice_axis(data, axis, steps - 1, steps), axis)
    last = _npx.one_hot(_lengths(sequence_length, "SequenceLast") - 1, steps, data.dtype)  # [B, T]
    if axis == 0:
        last = _janus.transpose(last, [1, 0])
    mask = last.reshape(tuple(last.shape) + (1,) * (data.ndim - 2))
    return _np.sum(data * mask, axis=axis)


@_op("SequenceReverse")
def _sequence_reverse(data, sequence_length=None, use_sequence_length=False, axis=0):
    """The first sequence_length steps of each sequence reversed (axis 0 is time); the padding
    after them stays."""
    if axis != 0:
        raise ValueError(f"SequenceReverse: axis = {axis}, expected 0")
    if not use_sequence_length:
        return _np.flip(data, 0)
    steps = data.shape[0]
    lengths = _lengths(sequence_length, "SequenceReverse").reshape(1, -1)  # [1, B]
    t = _np.arange(steps, dtype="int64", ctx=data.ctx).reshape(-1, 1)  # [T, 1]
    source = _np.where(t < lengths, lengths - 1 - t, t + lengths * 0)  # [T, B]
    perm = _npx.one_hot(source, steps, data.dtype)  # [T, B, S]
    return _np.einsum("tbs,sb...->tb...", perm, data)


# ---- elementwise --------------------------------------------------------------------------

def _same_dtype(fn):
    """A comparison whose 0/1 result has the input's dtype, as MXNet's legacy operators."""
    def compare(lhs, rhs):
        like = lhs if isinstance(lhs, _np.ndarray) else rhs
        return fn(lhs, rhs).astype(like.dtype)
    return compare


for _names, _fn in [(("maximum",), _np.maximum), (("minimum",), _np.minimum),
                    (("power",), _np.power), (("add",), _np.add), (("subtract",), _np.subtract),
                    (("multiply",), _np.multiply), (("divide",), _np.divide),
                    (("modulo", "broadcast_mod"), _np.mod)]:
    _op(*_names)(lambda lhs, rhs, _fn=_fn: _fn(lhs, rhs))
for _names, _fn in [(("equal", "broadcast_equal"), _np.equal),
                    (("not_equal", "broadcast_not_equal"), _np.not_equal),
                    (("greater", "broadcast_greater"), _np.greater),
                    (("greater_equal", "broadcast_greater_equal"), _np.greater_equal),
                    (("lesser", "broadcast_lesser"), _np.less),
                    (("lesser_equal", "broadcast_lesser_equal"), _np.less_equal),
                    (("logical_and", "broadcast_logical_and"),
                     lambda a, b: (a != 0) * (b != 0)),
                    (("logical_or", "broadcast_logical_or"),
                     lambda a, b: ((a != 0) + (b != 0)) != 0)]:
    _op(*_names)(_same_dtype(_fn))


def _trunc(x):
    return _np.sign(x) * _np.floor(_np.abs(x))


def _rint(x):
    """The nearest integer, halves rounded down (MXNet 1.9's rint: 0.5 -> 0, -0.5 -> -1; C's
    rounds them to even)."""
    r = _np.floor(x)
    return _np.where(x - r > 0.5, r + 1.0, r)


def _expm1(x):
    """exp(x) - 1, with the series x + x^2/2 + x^3/6 near 0 where the difference cancels."""
    small = _np.abs(_stop(x)) < 1e-3
    return _np.where(small, x * (1.0 + x * (0.5 + x / 6.0)), _np.exp(x) - 1.0)


_UNARY = {
    "floor": _np.floor,
    "ceil": lambda x: -_np.floor(-x),
    "round": lambda x: _np.sign(x) * _np.floor(_np.abs(x) + 0.5),  # half away from zero
    "rint": _rint,
    "trunc": _trunc,
    "fix": _trunc,
    "log2": lambda x: _np.log(x) * (1.0 / _math.log(2.0)),
    "log10": lambda x: _np.log(x) * (1.0 / _math.log(10.0)),
    "expm1": _expm1,
    "cbrt": lambda x: _np.sign(x) * _np.power(_np.abs(x), 1.0 / 3.0),
    "softsign": lambda x: x / (_np.abs(x) + 1.0),
    "logical_not": lambda x: (x == 0).astype(x.dtype),
    "identity": lambda x: x.copy(),
    "_copy": lambda x: x.copy(),
    "copy": lambda x: x.copy(),
}
for _name, _fn in _UNARY.items():
    _op(_name)(lambda data, _fn=_fn: _fn(data))


@_op("hard_sigmoid")
def _hard_sigmoid(data, alpha=0.2, beta=0.5):
    """clip(alpha x + beta, 0, 1)."""
    return _np.clip(data * float(alpha) + float(beta), 0.0, 1.0)


@_op("argmax_channel")
def _argmax_channel(data):
    """The index of the largest element along the last axis, as float32."""
    return _np.argmax(data, axis=-1).astype("float32")


@_op("shape_array")
def _shape_array(data):
    """data's shape as an int64 array."""
    return _np.array(list(data.shape), dtype="int64", ctx=data.ctx)


@_op("size_array")
def _size_array(data):
    """data's number of elements as an int64 array of shape (1,)."""
    return _np.array([data.size], dtype="int64", ctx=data.ctx)


@_op("split_v2")
def _split_v2(data, indices_or_sections=None, axis=0, squeeze_axis=False):
    """NumPy's split: equal sections, or the parts between the indices; squeeze_axis drops
    the axis from parts of extent 1."""
    sections = indices_or_sections
    sections = sections if isinstance(sections, int) else list(_ints(sections, "indices",
                                                                     "split_v2"))
    parts = _np.split(data, sections, axis=axis)
    if squeeze_axis:
        parts = [_np.squeeze(p, axis) for p in parts]
    return parts


@_op("khatri_rao")
def _khatri_rao(*args):
    """The column-wise Kronecker product of matrices with the same number of columns."""
    y = args[0]
    for b in args[1:]:
        if b.ndim != 2 or b.shape[1] != y.shape[1]:
            raise ValueError(f"khatri_rao: the matrices have shapes "
                             f"{[tuple(a.shape) for a in args]}, expected equal column counts")
        y = _np.einsum("ik,jk->ijk", y, b).reshape(-1, y.shape[1])
    return y


@_op("linalg_gemm2")
def _linalg_gemm2(A, B, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    """alpha op(A) op(B) over the last two axes (op transposes when asked)."""
    if axis != -2:
        raise _NotSupportedError("linalg_gemm2: only axis=-2 is supported")
    a = _np.swapaxes(A, -1, -2) if transpose_a else A
    b = _np.swapaxes(B, -1, -2) if transpose_b else B
    y = _np.matmul(a, b)
    return y if float(alpha) == 1.0 else y * float(alpha)


def _nan_reduction(name, base, neutral):
    from . import ndarray as _nd

    def reduce(data, axis=(), keepdims=False, exclude=False):
        clean = _np.where(_stop(data) != _stop(data), _np.full_like(data, neutral), data)
        return getattr(_nd, base)(clean, axis=axis, keepdims=keepdims, exclude=exclude)
    reduce.__doc__ = f"{base} over axis with NaN read as {neutral}."
    _op(name)(reduce)


_nan_reduction("nansum", "sum", 0.0)
_nan_reduction("nanprod", "prod", 1.0)


def _axis_reduction(name, base):
    from . import ndarray as _nd
    _op(name)(lambda data, axis=(), keepdims=False, exclude=False:
              getattr(_nd, base)(data, axis=axis, keepdims=keepdims, exclude=exclude))


for _name, _base in [("sum_axis", "sum"), ("max_axis", "max"), ("min_axis", "min")]:
    _axis_reduction(_name, _base)
del _name, _fn, _names, _base
