"""``npx``: MXNet's operators beyond NumPy (activations, softmax, devices, ``waitall``)."""
import types as _types

from . import _janus
from .context import cpu, gpu, num_gpus, current_context  # noqa: F401
from .numpy._ordering import topk  # noqa: F401

relu = _janus.relu
sigmoid = _janus.sigmoid
gelu = _janus.gelu
leaky_relu = _janus.leaky_relu
one_hot = _janus.one_hot
batch_flatten = _janus.flatten


def softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None):
    if temperature is not None and temperature != 1.0:
        data = data / temperature
    return _janus.softmax(data, axis)


def log_softmax(data, axis=-1, length=None, temperature=None, use_length=False, dtype=None):
    if temperature is not None and temperature != 1.0:
        data = data / temperature
    return _janus.log_softmax(data, axis)


def activation(data, act_type="relu"):
    table = {"relu": _janus.relu, "sigmoid": _janus.sigmoid, "tanh": _janus.tanh,
             "softrelu": _janus.softplus}
    if act_type not in table:
        raise ValueError(f"activation: act_type '{act_type}' is not known, expected one of "
                         f"{sorted(table)}")
    return table[act_type](data)


def dropout(data, p=0.5, mode="training", axes=None):
    from .autograd import is_training
    return _janus.dropout(data, float(p), is_training() or mode == "always")


def pick(data, index, axis=-1, keepdims=False):
    """data[..., index] along ``axis`` (the class scores of labels): ``index`` has data's shape
    without ``axis`` (or with it at extent 1)."""
    axis = axis % data.ndim
    if index.ndim == data.ndim:
        index = index.reshape(tuple(d for i, d in enumerate(index.shape) if i != axis))
    oh = _janus.one_hot(index.astype("int64", copy=False), data.shape[axis], data.dtype)
    if axis != data.ndim - 1:  # one_hot puts the classes last: move them to `axis`
        perm = list(range(data.ndim - 1))
        perm.insert(axis, data.ndim - 1)
        oh = _janus.transpose(oh, perm)
    return (data * oh).sum(axis=axis, keepdims=keepdims)


def batch_dot(a, b, transpose_a=False, transpose_b=False):
    """The products a[i] . b[i] of two batches of matrices [B, M, K] and [B, K, N] (either
    transposed first on request)."""
    from . import numpy as np
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError(f"batch_dot: the arrays have shapes {a.shape} and {b.shape}, expected "
                         "two batches of matrices [B, M, K] and [B, K, N]")
    if transpose_a:
        a = np.swapaxes(a, 1, 2)
    if transpose_b:
        b = np.swapaxes(b, 1, 2)
    return np.matmul(a, b)


def sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    """``data`` with the steps of each sequence past its length set to ``value``: the time axis
    is ``axis`` (0: [T, N, ...], 1: [N, T, ...]) and ``sequence_length`` [N] holds the lengths.
    Without use_sequence_length, ``data`` as it is."""
    from . import numpy as np
    if not use_sequence_length:
        return data
    if axis not in (0, 1):
        raise ValueError(f"sequence_mask: axis is {axis}, expected 0 ([T, N, ...]) or 1 "
                         "([N, T, ...])")
    if sequence_length is None or sequence_length.ndim != 1:
        raise ValueError("sequence_mask: use_sequence_length needs sequence_length of shape "
                         f"[batch], got {None if sequence_length is None else sequence_length.shape}")
    t, n = (data.shape[0], data.shape[1]) if axis == 0 else (data.shape[1], data.shape[0])
    if sequence_length.shape[0] != n:
        raise ValueError(f"sequence_mask: sequence_length has {sequence_length.shape[0]} "
                         f"lengths for a batch of {n}")
    steps = np.arange(t, ctx=data.ctx)
    lengths = sequence_length.astype(data.dtype).as_in_ctx(data.ctx)
    keep = steps.reshape(t, 1) < lengths.reshape(1, n)  # [T, N]
    if axis == 1:
        keep = keep.T
    keep = keep.reshape(keep.shape + (1,) * (data.ndim - 2))
    return np.where(keep, data, np.full(data.shape, value, dtype=data.dtype, ctx=data.ctx))


def waitall():
    """Waits for every operation pushed so far (the GIL released meanwhile)."""
    _janus.waitall()


def set_np(shape=True, array=True, dtype=False):
    """MXNet's switch to numpy semantics: Janus has only those, so this does nothing."""


def reset_np():
    """Does nothing (see set_np)."""


def is_np_array():
    return True


def is_np_shape():
    return True


def seed(seed_state, ctx="all"):
    _janus.seed(int(seed_state))


from .numpy._distributions import bernoulli as _bernoulli, batched as _batched  # noqa: E402


def _uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None, device=None):
    """Uniform draws of shape batch_shape + the broadcast shape of low and high."""
    return _batched("uniform_n", _janus.random_uniform, low, high, batch_shape, dtype, ctx,
                    device)


def _normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None, device=None):
    """Normal draws of shape batch_shape + the broadcast shape of loc and scale."""
    return _batched("normal_n", _janus.random_normal, loc, scale, batch_shape, dtype, ctx,
                    device)


random = _types.SimpleNamespace(seed=seed, bernoulli=_bernoulli, uniform_n=_uniform_n,
                                normal_n=_normal_n)

erf = _janus.erf


def nonzero(a):
    """MXNet's npx.nonzero: the int64 positions of the nonzero elements of ``a``, one row each
    (shape (count, a.ndim), NumPy's argwhere). Imperative only: its size depends on the values
    (TraceError in a hybridized forward)."""
    from .numpy._more import _positions
    import numpy as onp
    a, host = _positions("npx.nonzero", a)
    return _janus.from_numpy(onp.argwhere(host).astype(onp.int64), None, a.ctx)


def cast(data, dtype):
    """``data`` in ``dtype`` (a copy)."""
    return data.astype(dtype)


def _axis_range(begin, end, what):
    """MXNet's (begin, end) of a reshape_like side as Janus's axes: () every axis, (begin,) to
    the last, (begin, end); a begin of None is 0."""
    for name, v in ((what + "_begin", begin), (what + "_end", end)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise ValueError(f"reshape_like: {name} must be an integer or None, got {v!r}")
    if end is None:
        return [] if begin is None else [begin]
    return [begin or 0, end]


def reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    """``lhs`` with its axes [lhs_begin, lhs_end) replaced by ``rhs``'s axes [rhs_begin,
    rhs_end) (by default: ``lhs`` in ``rhs``'s shape; as many elements; negative bounds count
    from the end)."""
    return _janus.invoke("reshape_like", [lhs, rhs],
                         {"x_axes": _axis_range(lhs_begin, lhs_end, "lhs"),
                          "like_axes": _axis_range(rhs_begin, rhs_end, "rhs")})[0]


def shape_array(data):
    """``data``'s shape as a 1-D int64 array."""
    return data.shape_array()
