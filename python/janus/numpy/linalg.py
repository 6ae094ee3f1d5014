"""``np.linalg``: the norms Janus has."""
from .. import _janus


def norm(x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro"):
        raise NotImplementedError(f"norm: ord={ord!r} is not supported, expected None or 2")
    return _janus.norm(x, axis, keepdims)
