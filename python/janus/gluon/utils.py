"""``gluon.utils``."""
from .. import _janus


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Slices of ``data`` along its first axis, one on each device of ``ctx_list``."""
    if batch_axis != 0:
        raise NotImplementedError("split_and_load: only batch_axis=0 is supported")
    if not isinstance(ctx_list, (list, tuple)):
        ctx_list = [ctx_list]
    return _janus.split_and_load(data, list(ctx_list), even_split)
