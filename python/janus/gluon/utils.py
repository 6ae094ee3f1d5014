"""``gluon.utils``."""
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
