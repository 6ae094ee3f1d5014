"""``np.random``: sampling from the seeded counter-based generator (MXNet's names)."""
import numpy as _onp

from .. import _janus
from ._distributions import (  # noqa: F401
    beta, chisquare, exponential, gamma, gumbel, laplace, logistic, lognormal, multinomial,
    multivariate_normal, pareto, poisson, power, rayleigh, weibull, weighted_choice)
from ._distributions import _is_scalar, located


def _difference(high, low):
    """high - low, on the device when either is a Janus array, else on the host."""
    from .. import numpy as np
    if isinstance(high, _janus.ndarray) or isinstance(low, _janus.ndarray):
        like = high if isinstance(high, _janus.ndarray) else low
        as_array = (lambda v: v if isinstance(v, _janus.ndarray) else
                    np.array(v, dtype="float64", ctx=like.ctx))
        return as_array(high).astype("float64") - as_array(low).astype("float64")
    return _onp.asarray(high, dtype=_onp.float64) - _onp.asarray(low, dtype=_onp.float64)


def _shape(size):
    if size is None:
        return ()
    return size


def seed(seed):
    _janus.seed(int(seed))


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Normal samples; loc and scale may be arrays (broadcast as NumPy's)."""
    if not (_is_scalar(loc) and _is_scalar(scale)):
        return located("normal", _janus.random_normal, loc, scale, size, dtype, ctx, device)
    return _janus.random_normal(float(loc), float(scale), _shape(size), dtype,
                                ctx if ctx is not None else device)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Uniform samples in [low, high); low and high may be arrays (broadcast as NumPy's)."""
    if not (_is_scalar(low) and _is_scalar(high)):
        return located("uniform", _janus.random_uniform, low, _difference(high, low), size,
                       dtype, ctx, device, what=("low", "high - low"))
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


def permutation(x, ctx=None, device=None):
    """A random ordering of 0, ..., x - 1 (``x`` an int, int64), or a copy of array ``x`` with
    its rows in a random order."""
    from .. import numpy as np
    n = x if isinstance(x, int) else x.shape[0]
    if n < 0:
        raise ValueError(f"permutation: {n} elements, expected a number >= 0")
    perm = _janus.invoke("permutation", [], {"n": int(n)})[0]
    if isinstance(x, int):
        target = ctx if ctx is not None else device
        return perm if target is None else perm.as_in_ctx(target)
    return np.take(x, perm.as_in_ctx(x.ctx), axis=0)


def shuffle(x):
    """Puts the rows of ``x`` in a random order, in place."""
    x[:] = permutation(x)


def choice(a, size=None, replace=True, p=None, ctx=None, device=None):
    """Elements drawn from ``a`` (an array, or range(a) for an int), uniformly or with the
    probabilities ``p``: with replacement, or without it (then at most as many as ``a`` holds,
    or as ``p`` gives a nonzero probability)."""
    from .. import numpy as np
    if p is not None:
        return weighted_choice(a, size, replace, p, ctx if ctx is not None else device)
    n = a if isinstance(a, int) else a.shape[0]
    shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    count = 1
    for s in shape:
        count *= s
    target = ctx if ctx is not None else device
    if replace:
        if n <= 0:
            raise ValueError(f"random.choice: cannot draw from {n} elements")
        idx = randint(0, n, size=shape if shape else (1,), ctx=target)
    else:
        if count > n:
            raise ValueError(f"random.choice: {count} draws without replacement from {n} "
                             "elements, expected at most as many as there are")
        idx = permutation(n, ctx=target)[:count].reshape(shape if shape else (1,))
    if isinstance(a, int):
        return idx.reshape(shape) if shape else idx.reshape(())
    out = np.take(a, idx.as_in_ctx(a.ctx), axis=0)
    return out if shape else out.reshape(a.shape[1:])
