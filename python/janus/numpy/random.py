"""``np.random``: sampling from the seeded counter-based generator (MXNet's names)."""
from .. import _janus


def _shape(size):
    if size is None:
        return ()
    return size


def seed(seed):
    _janus.seed(int(seed))


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    return _janus.random_normal(float(loc), float(scale), _shape(size), dtype,
                                ctx if ctx is not None else device)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    return _janus.random_uniform(float(low), float(high), _shape(size), dtype,
                                 ctx if ctx is not None else device)


def randint(low, high=None, size=None, dtype=None, ctx=None, device=None, out=None):
    if high is None:
        low, high = 0, low
    return _janus.randint(int(low), int(high), _shape(size), dtype,
                          ctx if ctx is not None else device)


def rand(*size):
    return uniform(0.0, 1.0, size=size)


def randn(*size):
    return normal(0.0, 1.0, size=size)
