"""``gluon.utils``."""
import math as _math
import warnings as _warnings

from .. import _janus


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Slices of ``data`` along ``batch_axis``, one on each device of ``ctx_list`` (a ValueError
    when ``even_split`` and the batch does not divide evenly)."""
    if not isinstance(ctx_list, (list, tuple)):
        ctx_list = [ctx_list]
    if not isinstance(data, _janus.ndarray):
        from .. import numpy as np
        data = np.array(data)
    if batch_axis == 0:
        return _janus.split_and_load(data, list(ctx_list), even_split)
    if not -data.ndim <= batch_axis < data.ndim:
        raise ValueError(f"split_and_load: batch_axis {batch_axis} is out of range for an array "
                         f"of shape {data.shape}")
    # Another axis: move it first, split there, and move it back in each slice.
    from .. import numpy as np
    axis = batch_axis % data.ndim
    parts = _janus.split_and_load(np.moveaxis(data, axis, 0), list(ctx_list), even_split)
    return [np.moveaxis(p, 0, axis) for p in parts]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescales ``arrays`` in place so that their joint 2-norm is at most ``max_norm``, as
    MXNet's: each is multiplied by min(1, max_norm / (norm + 1e-8)). Returns the norm before
    the rescaling: a Python float (after a warning when it is not finite, as then the arrays
    hold NaN), or with ``check_isfinite=False`` an array of shape (1,), without waiting for it.
    The arrays may live on several devices; the norm is summed on the first one's."""
    from .. import numpy as np
    if len(arrays) == 0:
        raise ValueError("clip_global_norm: no arrays given, expected at least one")
    ctx = arrays[0].ctx
    total = None
    for a in arrays:
        sq = np.sum(a * a).as_in_ctx(ctx)
        total = sq if total is None else total + sq
    total = np.sqrt(total)
    scale = np.minimum(max_norm / (total + 1e-8), 1.0)
    for a in arrays:
        a *= scale.as_in_ctx(a.ctx)
    if not check_isfinite:
        return total.reshape((1,))
    norm = total.item()
    if not _math.isfinite(norm):
        _warnings.warn("nan or inf is detected. Clipping results will be undefined.",
                       UserWarning, stacklevel=2)
    return norm
