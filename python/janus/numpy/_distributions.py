"""The distributions of ``np.random`` beyond uniform and normal (MXNet 1.9's names and
arguments, NumPy's definitions). Where a sample is an exact transform of uniform or normal
draws it is composed of those operators; gamma and poisson need rejection loops, which run in
the random_gamma and random_poisson operators. Every draw comes from the seeded counter-based
generator, so ``np.random.seed`` (``npx.random.seed``, ``mx.random.seed``) makes a program
reproducible.

Parameters broadcast against each other and against ``size`` as in NumPy: with ``size`` the
output has that shape, without it the parameters' broadcast shape. Parameter values given on
the host (numbers, lists, NumPy arrays) are checked (a negative scale is a ValueError naming
it); values in Janus arrays are not read back (a blocker), and an invalid one gives NaN
(gamma, beta, chisquare, poisson) or a meaningless number."""
import functools as _functools
import inspect as _inspect

import numpy as _onp

from .. import _janus

# Draws are made in float64 and cast to the requested dtype (float32 by default, as MXNet).
_WORK = "float64"


def _np():
    from .. import numpy as np
    return np


def _target(ctx, device):
    return ctx if ctx is not None else device


def _size(size):
    if size is None:
        return None
    return (int(size),) if isinstance(size, (int, _onp.integer)) else tuple(int(s) for s in size)


def _param(value, what, fn, low=None, strict=False):
    """A parameter as a float64 Janus array (or a Python float), checked against ``low`` when
    it is on the host."""
    np = _np()
    if isinstance(value, np.ndarray):
        return value.astype(_WORK, copy=False)
    host = _onp.asarray(value, dtype=_onp.float64)
    if low is not None:
        bad = host <= low if strict else host < low
        if bad.any():
            relation = ">" if strict else ">="
            raise ValueError(f"random.{fn}: {what} = {value!r}, expected {what} {relation} {low}")
    return float(host) if host.ndim == 0 else host


def _out_shape(fn, size, *params):
    """NumPy's rule: ``size`` when given (the parameters must broadcast to it), else the
    parameters' broadcast shape."""
    shapes = [tuple(p.shape) for p in params if not isinstance(p, float)]
    try:
        joint = _onp.broadcast_shapes(*shapes) if shapes else ()
        if size is not None and _onp.broadcast_shapes(joint, size) != size:
            raise ValueError
    except ValueError:
        raise ValueError(f"random.{fn}: parameter shapes {shapes} do not broadcast to size "
                         f"{size}") from None
    return joint if size is None else size


def _arr(p, ctx):
    """A host parameter as a Janus array on ``ctx`` (Janus arrays and floats unchanged)."""
    if isinstance(p, _onp.ndarray):
        return _janus.from_numpy(p, None, ctx)
    return p


def _open_uniform(shape, ctx):
    """Uniform float64 draws in the open interval (0, 1): their logs are finite."""
    return _janus.random_uniform(2.0 ** -53, 1.0, shape, _WORK, ctx)


def _finish(x, shape, dtype):
    if tuple(x.shape) != tuple(shape):
        x = _janus.broadcast_to(x, tuple(shape))
    return x.astype(_onp.float32 if dtype is None else dtype)


def _writes_out(fn):
    """``out=``: the samples are written into that array (of their shape; cast to its dtype)
    and it is returned."""
    signature = _inspect.signature(fn)

    @_functools.wraps(fn)
    def sample(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        out = bound.arguments.pop("out", None)
        y = fn(**bound.arguments)
        if out is None:
            return y
        if tuple(out.shape) != tuple(y.shape):
            raise ValueError(f"random.{fn.__name__}: out has shape {tuple(out.shape)}, "
                             f"expected the samples' {tuple(y.shape)}")
        out[...] = y.astype(out.dtype)
        return out
    return sample


def _ctx_of(ctx, device, *params):
    target = _target(ctx, device)
    if target is None:
        for p in params:
            if isinstance(p, _np().ndarray):
                return p.ctx
    return target


def _loc_scale(name, loc, scale, size, ctx, device):
    """A location-scale distribution's checked parameters, its output shape and its device."""
    loc = _param(loc, "loc", name)
    scale = _param(scale, "scale", name, low=0.0)
    return loc, scale, _out_shape(name, _size(size), loc, scale), _ctx_of(ctx, device, loc, scale)


@_writes_out
def exponential(scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    """Exponential samples of mean ``scale``: -scale log U."""
    scale = _param(scale, "scale", "exponential", low=0.0)
    shape = _out_shape("exponential", _size(size), scale)
    ctx = _ctx_of(ctx, device, scale)
    return _finish(-_np().log(_open_uniform(shape, ctx)) * _arr(scale, ctx), shape, dtype)


@_writes_out
def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    """exp of normal samples with mean ``mean`` and standard deviation ``sigma``."""
    mean = _param(mean, "mean", "lognormal")
    sigma = _param(sigma, "sigma", "lognormal", low=0.0)
    shape = _out_shape("lognormal", _size(size), mean, sigma)
    ctx = _ctx_of(ctx, device, mean, sigma)
    z = _janus.random_normal(0.0, 1.0, shape, _WORK, ctx)
    return _finish(_np().exp(z * _arr(sigma, ctx) + _arr(mean, ctx)), shape, dtype)


@_writes_out
def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    """loc + scale log(U / (1 - U))."""
    loc, scale, shape, ctx = _loc_scale("logistic", loc, scale, size, ctx, device)
    u = _open_uniform(shape, ctx)
    np = _np()
    return _finish((np.log(u) - np.log(1.0 - u)) * _arr(scale, ctx) + _arr(loc, ctx), shape,
                   dtype)


@_writes_out
def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    """loc - scale log(-log U)."""
    loc, scale, shape, ctx = _loc_scale("gumbel", loc, scale, size, ctx, device)
    np = _np()
    u = _open_uniform(shape, ctx)
    return _finish(_arr(loc, ctx) - np.log(-np.log(u)) * _arr(scale, ctx), shape, dtype)


@_writes_out
def laplace(loc=0.0, scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    """loc + scale E S: an exponential sample E with a random sign S (NumPy's laplace)."""
    loc, scale, shape, ctx = _loc_scale("laplace", loc, scale, size, ctx, device)
    np = _np()
    u = _open_uniform(shape, ctx)
    sign = 1.0 - 2.0 * (_janus.random_uniform(0.0, 1.0, shape, _WORK, ctx) < 0.5).astype(_WORK)
    return _finish(_arr(loc, ctx) - np.log(u) * sign * _arr(scale, ctx), shape, dtype)


@_writes_out
def rayleigh(scale=1.0, size=None, ctx=None, out=None, device=None, dtype=None):
    """scale sqrt(-2 log U)."""
    scale = _param(scale, "scale", "rayleigh", low=0.0)
    shape = _out_shape("rayleigh", _size(size), scale)
    ctx = _ctx_of(ctx, device, scale)
    np = _np()
    return _finish(np.sqrt(-2.0 * np.log(_open_uniform(shape, ctx))) * _arr(scale, ctx), shape,
                   dtype)


@_writes_out
def weibull(a, size=None, ctx=None, out=None, device=None, dtype=None):
    """(-log U)^(1/a): Weibull samples of shape ``a`` and scale 1."""
    a = _param(a, "a", "weibull", low=0.0)
    shape = _out_shape("weibull", _size(size), a)
    ctx = _ctx_of(ctx, device, a)
    np = _np()
    return _finish(np.power(-np.log(_open_uniform(shape, ctx)), 1.0 / _arr(a, ctx)), shape,
                   dtype)


@_writes_out
def pareto(a, size=None, ctx=None, out=None, device=None, dtype=None):
    """U^(-1/a) - 1: Pareto II (Lomax) samples of shape ``a``, as NumPy's and MXNet's."""
    a = _param(a, "a", "pareto", low=0.0, strict=True)
    shape = _out_shape("pareto", _size(size), a)
    ctx = _ctx_of(ctx, device, a)
    np = _np()
    return _finish(np.power(_open_uniform(shape, ctx), -1.0 / _arr(a, ctx)) - 1.0, shape, dtype)


@_writes_out
def power(a, size=None, ctx=None, out=None, device=None, dtype=None):
    """U^(1/a): samples in [0, 1] with density a x^(a - 1)."""
    a = _param(a, "a", "power", low=0.0, strict=True)
    shape = _out_shape("power", _size(size), a)
    ctx = _ctx_of(ctx, device, a)
    return _finish(_np().power(_open_uniform(shape, ctx), 1.0 / _arr(a, ctx)), shape, dtype)


def _standard_gamma(alpha, shape, ctx):
    """Gamma(alpha, 1) samples of ``shape`` in float64 (the random_gamma operator)."""
    a = _arr(alpha, ctx)
    a = _janus.full(tuple(shape), a, _WORK, ctx) if isinstance(a, float) else \
        _janus.broadcast_to(a.astype(_WORK, copy=False), tuple(shape))
    return _janus.invoke("random_gamma", [a], {})[0]


@_writes_out
def gamma(shape=1.0, scale=1.0, size=None, dtype=None, ctx=None, out=None, device=None):
    """Gamma samples of shape ``shape`` (alpha) and scale ``scale`` (mean shape x scale)."""
    alpha = _param(shape, "shape", "gamma", low=0.0, strict=True)
    scale = _param(scale, "scale", "gamma", low=0.0)
    out_shape = _out_shape("gamma", _size(size), alpha, scale)
    ctx = _ctx_of(ctx, device, alpha, scale)
    return _finish(_standard_gamma(alpha, out_shape, ctx) * _arr(scale, ctx), out_shape, dtype)


def beta(a, b, size=None, dtype=None, ctx=None, device=None):
    """X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)."""
    a = _param(a, "a", "beta", low=0.0, strict=True)
    b = _param(b, "b", "beta", low=0.0, strict=True)
    shape = _out_shape("beta", _size(size), a, b)
    ctx = _ctx_of(ctx, device, a, b)
    x = _standard_gamma(a, shape, ctx)
    y = _standard_gamma(b, shape, ctx)
    return _finish(x / (x + y), shape, dtype)


def chisquare(df, size=None, dtype=None, ctx=None, device=None):
    """2 Gamma(df / 2): chi-square samples with ``df`` degrees of freedom (mean df; MXNet
    1.9.1's has mean df / 4, a bug not copied)."""
    df = _param(df, "df", "chisquare", low=0.0, strict=True)
    shape = _out_shape("chisquare", _size(size), df)
    ctx = _ctx_of(ctx, device, df)
    half = df / 2.0 if not isinstance(df, _np().ndarray) else df * 0.5
    return _finish(_standard_gamma(half, shape, ctx) * 2.0, shape, dtype)


def poisson(lam=1.0, size=None, dtype=None, ctx=None, device=None):
    """Poisson counts of mean ``lam`` (int64 unless ``dtype`` says otherwise, as NumPy)."""
    lam = _param(lam, "lam", "poisson", low=0.0)
    shape = _out_shape("poisson", _size(size), lam)
    ctx = _ctx_of(ctx, device, lam)
    a = _arr(lam, ctx)
    a = _janus.full(tuple(shape), a, _WORK, ctx) if isinstance(a, float) else \
        _janus.broadcast_to(a.astype(_WORK, copy=False), tuple(shape))
    return _janus.invoke("random_poisson", [a], {})[0].astype(
        _onp.int64 if dtype is None else dtype)


def _probabilities(p, n, fn):
    """``p`` as a checked float64 NumPy vector of ``n`` probabilities summing to 1."""
    np = _np()
    host = p.asnumpy() if isinstance(p, np.ndarray) else _onp.asarray(p)
    host = host.astype(_onp.float64)
    if host.ndim != 1 or (n is not None and host.shape[0] != n):
        raise ValueError(f"random.{fn}: p has shape {host.shape}, expected "
                         f"({'K' if n is None else n},), one probability per element")
    if (host < 0).any() or not _onp.isfinite(host).all():
        raise ValueError(f"random.{fn}: p = {host.tolist()} has a negative or non-finite "
                         "entry, expected probabilities >= 0")
    total = float(host.sum())
    if abs(total - 1.0) > 1e-6 * max(1, host.shape[0]) ** 0.5 + 1e-8:
        raise ValueError(f"random.{fn}: p sums to {total!r}, expected 1 (p = "
                         f"{host.tolist()})")
    return host


def _categorical(cdf, shape, ctx):
    """Indices drawn with the probabilities whose cumulative sums are ``cdf`` (a float64 Janus
    vector ending in 1): the number of cumulative sums at or below a uniform draw."""
    np = _np()
    k = cdf.shape[0]
    u = _janus.random_uniform(0.0, 1.0, tuple(shape) + (1,), _WORK, ctx)
    bounds = _janus.slice_axis(cdf, 0, 0, k - 1)
    return np.sum((u >= bounds).astype("int64"), axis=-1)


def _cdf(p, ctx):
    c = _onp.cumsum(p)
    c = c / c[-1]
    return _janus.from_numpy(c, None, ctx)


def weighted_choice(a, size, replace, p, ctx):
    """choice(a, size, replace, p) for weights ``p`` (see random.choice)."""
    np = _np()
    n = a if isinstance(a, int) else a.shape[0]
    if n <= 0:
        raise ValueError(f"random.choice: cannot draw from {n} elements")
    p = _probabilities(p, n, "choice")
    shape = _size(size) or ()
    count = int(_onp.prod(shape)) if shape else 1
    if replace:
        idx = _categorical(_cdf(p, ctx), shape, ctx)
    else:
        nonzero = int((p > 0).sum())
        if count > nonzero:
            raise ValueError(f"random.choice: {count} draws without replacement, but only "
                             f"{nonzero} of the {n} elements have a nonzero probability in p")
        # Successive weighted draws (NumPy's replace=False): element i gets the key
        # log(U_i) / p_i; the largest keys, in order, are such a sequence (Efraimidis and
        # Spirakis). Each step takes the largest key and masks it out.
        weights = _janus.from_numpy(p, None, ctx)
        keys = np.log(_open_uniform((n,), ctx)) / weights
        picked = []
        positions = np.arange(n, dtype="int64", ctx=ctx)
        for _ in range(count):
            i = np.argmax(keys)
            picked.append(i.reshape(1))
            keys = np.where(positions == i, -_onp.inf, keys)
        idx = np.concatenate(picked) if picked else np.zeros((0,), dtype="int64", ctx=ctx)
        idx = idx.reshape(shape)
    if isinstance(a, int):
        return idx
    out = np.take(a, idx.reshape(-1).as_in_ctx(a.ctx), axis=0)
    return out.reshape(tuple(shape) + tuple(a.shape[1:]))


def multinomial(n, pvals, size=None):
    """Counts of ``n`` draws over ``len(pvals)`` outcomes (int64), of shape size + (K,). Each
    draw is made (an index from one uniform) and counted, so the work and the memory grow as
    size x n x K."""
    np = _np()
    if isinstance(n, bool) or not isinstance(n, (int, _onp.integer)) or n < 0:
        raise ValueError(f"random.multinomial: n = {n!r}, expected an integer >= 0")
    p = _probabilities(pvals, None, "multinomial")
    k = p.shape[0]
    shape = _size(size) or ()
    ctx = pvals.ctx if isinstance(pvals, np.ndarray) else None
    draws = _categorical(_cdf(p, ctx), tuple(shape) + (int(n),), ctx)
    outcomes = np.arange(k, dtype="int64", ctx=ctx)
    hits = (draws.reshape(tuple(shape) + (int(n), 1)) == outcomes).astype("int64")
    return np.sum(hits, axis=-2) if n else np.zeros(tuple(shape) + (k,), dtype="int64", ctx=ctx)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None, dtype=None,
                        ctx=None, device=None):
    """mean + L z, with L L^T = cov (the Cholesky factor, computed on the host: a blocker when
    cov is a Janus array) and z standard normal; shape size + (K,)."""
    np = _np()
    host_cov = cov.asnumpy() if isinstance(cov, np.ndarray) else _onp.asarray(cov)
    host_cov = host_cov.astype(_onp.float64)
    k = host_cov.shape[0] if host_cov.ndim == 2 else -1
    if host_cov.ndim != 2 or host_cov.shape != (k, k):
        raise ValueError(f"random.multivariate_normal: cov has shape {host_cov.shape}, "
                         "expected a square matrix")
    if not _onp.allclose(host_cov, host_cov.T):
        raise ValueError("random.multivariate_normal: cov is not symmetric")
    try:
        factor = _onp.linalg.cholesky(host_cov)
    except _onp.linalg.LinAlgError:
        # Semi-definite: the symmetric square root from the eigendecomposition.
        w, v = _onp.linalg.eigh(host_cov)
        if w.min() < -1e-8 * max(1.0, abs(w).max()):
            raise ValueError(f"random.multivariate_normal: cov is not positive semi-definite "
                             f"(eigenvalue {w.min()!r})") from None
        factor = v * _onp.sqrt(_onp.clip(w, 0, None))
    ctx = _ctx_of(ctx, device, mean)
    m = mean.astype(_WORK) if isinstance(mean, np.ndarray) else \
        _janus.from_numpy(_onp.asarray(mean, dtype=_onp.float64), None, ctx)
    if tuple(m.shape) != (k,):
        raise ValueError(f"random.multivariate_normal: mean has shape {tuple(m.shape)}, "
                         f"expected ({k},) like cov")
    shape = _size(size) or ()
    z = _janus.random_normal(0.0, 1.0, tuple(shape) + (k,), _WORK, ctx)
    lt = _janus.from_numpy(_onp.ascontiguousarray(factor.T), None, ctx)
    y = np.matmul(z.reshape(-1, k), lt).reshape(tuple(shape) + (k,)) + m
    return y.astype(_onp.float32 if dtype is None else dtype)


@_writes_out
def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None, device=None):
    """npx.random.bernoulli: 1 with probability ``prob`` (or sigmoid(``logit``)), else 0."""
    np = _np()
    if (prob is None) == (logit is None):
        raise ValueError("random.bernoulli: give exactly one of prob and logit")
    if prob is not None:
        prob = _param(prob, "prob", "bernoulli", low=0.0)
        if not isinstance(prob, np.ndarray) and (_onp.asarray(prob) > 1).any():
            raise ValueError(f"random.bernoulli: prob = {prob!r}, expected prob <= 1")
    else:
        prob = _param(logit, "logit", "bernoulli")
        prob = np.sigmoid(prob) if isinstance(prob, np.ndarray) else \
            1.0 / (1.0 + _onp.exp(-_onp.asarray(prob)))
        prob = float(prob) if _onp.ndim(prob) == 0 else prob
    shape = _out_shape("bernoulli", _size(size), prob)
    ctx = _ctx_of(ctx, device, prob)
    u = _janus.random_uniform(0.0, 1.0, shape, _WORK, ctx)
    return (u < _arr(prob, ctx)).astype(_onp.float32 if dtype is None else dtype)


def _is_scalar(v):
    return isinstance(v, (int, float, _onp.integer, _onp.floating)) and not isinstance(v, bool)


def located(fn, base, loc, scale, size, dtype, ctx, device, what=("loc", "scale")):
    """loc + scale x draws of ``base`` (standard normal, or uniform in [0, 1)), for array
    parameters: broadcast with each other and with ``size`` as NumPy's."""
    loc = _param(loc, what[0], fn)
    scale = _param(scale, what[1], fn, low=0.0 if fn == "normal" else None)
    shape = _out_shape(fn, _size(size), loc, scale)
    ctx = _ctx_of(ctx, device, loc, scale)
    draws = base(0.0, 1.0, shape, _WORK, ctx)
    return _finish(draws * _arr(scale, ctx) + _arr(loc, ctx), shape, dtype)


def batched(fn, base, a, b, batch_shape, dtype, ctx, device):
    """npx.random.uniform_n / normal_n: draws of shape batch_shape + the parameters'
    broadcast shape."""
    pa, pb = _param(a, "first parameter", fn), _param(b, "second parameter", fn)
    joint = _out_shape(fn, None, pa, pb)
    batch = _size(batch_shape) or ()
    shape = tuple(batch) + tuple(joint)
    ctx = _ctx_of(ctx, device, pa, pb)
    draws = base(0.0, 1.0, shape, _WORK, ctx)
    if fn == "uniform_n":
        return _finish(draws * (_arr(pb, ctx) - _arr(pa, ctx)) + _arr(pa, ctx), shape, dtype)
    return _finish(draws * _arr(pb, ctx) + _arr(pa, ctx), shape, dtype)
