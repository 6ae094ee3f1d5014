"""np.random's distributions (janus/numpy/_distributions.py): reproducible under a seed, shapes
and broadcasting as NumPy's, sample statistics within 6 standard errors of the distribution's
(the seeds are fixed, so the tests are stable), and the messages for invalid parameters.

Continuous distributions with a closed-form CDF F are checked at three points x: the fraction
of samples <= x is a mean of n Bernoulli(F(x)) draws, standard error sqrt(F (1 - F) / n). Means
are checked with standard error sqrt(var / n) and variances with sqrt((mu4 - var^2) / n), mu4 the
fourth central moment."""
import math

import numpy as onp
import pytest

import janus as mx
from janus import np, npx

N = 200000


def _phi(z):
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def _lap(x, loc, s):
    return 0.5 * math.exp((x - loc) / s) if x < loc else 1 - 0.5 * math.exp(-(x - loc) / s)


# name: (draw n samples, CDF, three points)
CDFS = {
    "exponential": (lambda n: np.random.exponential(2.0, size=n),
                    lambda x: 1 - math.exp(-x / 2), [0.5, 2.0, 5.0]),
    "lognormal": (lambda n: np.random.lognormal(0.5, 0.75, size=n),
                  lambda x: _phi((math.log(x) - 0.5) / 0.75), [0.8, 1.6, 4.0]),
    "logistic": (lambda n: np.random.logistic(1.0, 2.0, size=n),
                 lambda x: 1 / (1 + math.exp(-(x - 1) / 2)), [-3.0, 1.0, 4.0]),
    "gumbel": (lambda n: np.random.gumbel(1.0, 2.0, size=n),
               lambda x: math.exp(-math.exp(-(x - 1) / 2)), [-1.0, 1.0, 5.0]),
    "laplace": (lambda n: np.random.laplace(1.0, 2.0, size=n),
                lambda x: _lap(x, 1.0, 2.0), [-2.0, 0.5, 3.0]),
    "rayleigh": (lambda n: np.random.rayleigh(2.0, size=n),
                 lambda x: 1 - math.exp(-x * x / 8), [1.0, 2.5, 5.0]),
    "weibull": (lambda n: np.random.weibull(1.5, size=n),
                lambda x: 1 - math.exp(-x ** 1.5), [0.3, 1.0, 2.0]),
    "pareto": (lambda n: np.random.pareto(3.0, size=n),
               lambda x: 1 - (1 + x) ** -3.0, [0.1, 0.5, 2.0]),
    "power": (lambda n: np.random.power(3.0, size=n), lambda x: x ** 3.0, [0.3, 0.7, 0.95]),
}


@pytest.mark.parametrize("name", sorted(CDFS))
def test_continuous_distributions_follow_their_cdf(name):
    draw, cdf, points = CDFS[name]
    np.random.seed(17)
    x = draw(N)
    assert x.shape == (N,) and x.dtype == onp.float32
    host = x.asnumpy().astype(onp.float64)
    for p in points:
        f = cdf(p)
        assert abs((host <= p).mean() - f) < 6 * math.sqrt(f * (1 - f) / N), (name, p)


def _check_moments(host, mean, var, mu4):
    n = host.size
    assert abs(host.mean() - mean) < 6 * math.sqrt(var / n)
    assert abs(host.var(ddof=1) - var) < 6 * math.sqrt((mu4 - var * var) / n)


@pytest.mark.parametrize("k,theta", [(0.4, 1.0), (2.0, 3.0), (30.0, 0.5)])
def test_gamma_moments(k, theta):
    np.random.seed(3)
    x = np.random.gamma(k, theta, size=N, dtype="float64").asnumpy()
    _check_moments(x, k * theta, k * theta ** 2, theta ** 4 * (3 * k * k + 6 * k))
    assert (x > 0).all()


def test_chisquare_is_two_gammas_of_half_the_degrees():
    np.random.seed(4)
    x = np.random.chisquare(3.0, size=N, dtype="float64").asnumpy()
    _check_moments(x, 3.0, 6.0, 16 * (3 * 1.5 ** 2 + 6 * 1.5))


def test_beta_moments():
    """Beta(2, 3): mean 0.4, variance 0.04. The samples lie in [0, 1], so |x - m|^4 <= |x - m|^2
    and mu4 - var^2 < var bounds the variance's standard error by sqrt(var / n)."""
    np.random.seed(5)
    x = np.random.beta(2.0, 3.0, size=N, dtype="float64").asnumpy()
    assert abs(x.mean() - 0.4) < 6 * math.sqrt(0.04 / N)
    assert abs(x.var() - 0.04) < 6 * math.sqrt(0.04 / N)
    assert ((x >= 0) & (x <= 1)).all()


@pytest.mark.parametrize("lam", [0.7, 4.0, 25.0, 1000.0])
def test_poisson_moments(lam):
    np.random.seed(6)
    x = np.random.poisson(lam, size=N)
    assert x.dtype == onp.int64
    _check_moments(x.asnumpy().astype(onp.float64), lam, lam, 3 * lam * lam + lam)


def test_same_seed_same_draws_whichever_seed_function():
    def draws():
        return [np.random.gamma(0.5, size=50).asnumpy(), np.random.poisson(3.0, size=50).asnumpy(),
                np.random.exponential(size=50).asnumpy(),
                np.random.choice(10, size=20, p=[0.1] * 10).asnumpy(),
                np.random.multinomial(5, [0.5, 0.5], size=3).asnumpy()]
    np.random.seed(42)
    a = draws()
    for seed in (np.random.seed, npx.random.seed, mx.random.seed):
        seed(42)
        for x, y in zip(a, draws()):
            onp.testing.assert_array_equal(x, y)
    b = draws()
    assert not onp.array_equal(a[0], b[0])


def test_shapes_and_broadcasting_of_parameters():
    alpha = np.array([1.0, 2.0, 3.0])
    assert np.random.gamma(alpha).shape == (3,)
    assert np.random.gamma(alpha, size=(2, 3)).shape == (2, 3)
    assert np.random.gamma([[1.0], [2.0]], [1.0, 2.0, 3.0]).shape == (2, 3)
    assert np.random.exponential().shape == ()
    assert np.random.lognormal(size=4).shape == (4,)
    assert np.random.poisson([1.0, 100.0], size=(5, 2)).shape == (5, 2)
    assert np.random.beta(2.0, [1.0, 2.0]).shape == (2,)
    assert np.random.gumbel(0.0, 1.0, size=(2, 2), dtype="float64").dtype == onp.float64
    # Each column follows its own parameter.
    np.random.seed(8)
    cols = np.random.poisson(np.array([1.0, 100.0]), size=(20000, 2)).asnumpy().mean(axis=0)
    assert abs(cols[0] - 1) < 6 * math.sqrt(1 / 20000)
    assert abs(cols[1] - 100) < 6 * math.sqrt(100 / 20000)
    with pytest.raises(ValueError, match=r"random.gamma: parameter shapes \[\(3,\)\] do not "
                                         r"broadcast to size \(2, 2\)"):
        np.random.gamma(alpha, size=(2, 2))


def test_weighted_choice_with_replacement_follows_p():
    np.random.seed(9)
    p = onp.array([0.1, 0.0, 0.6, 0.3])
    x = np.random.choice(4, size=(N // 4, 4), p=p)
    assert x.shape == (N // 4, 4) and x.dtype == onp.int64
    counts = onp.bincount(x.asnumpy().ravel(), minlength=4) / N
    assert counts[1] == 0
    for k in range(4):
        assert abs(counts[k] - p[k]) <= 6 * math.sqrt(p[k] * (1 - p[k]) / N)
    rows = np.random.choice(np.array([[1.0, 2.0], [3.0, 4.0]]), size=3, p=np.array([0.0, 1.0]))
    onp.testing.assert_array_equal(rows.asnumpy(), [[3, 4]] * 3)
    assert np.random.choice(3, p=[0.2, 0.3, 0.5]).shape == ()


def test_weighted_choice_without_replacement_is_successive_weighted_draws():
    """Two draws from p = (0.6, 0.3, 0.1) without replacement: the ordered pair (i, j) has
    probability p_i p_j / (1 - p_i), as NumPy's successive draws."""
    np.random.seed(10)
    p = [0.6, 0.3, 0.1]
    trials = 1000
    counts = {}
    for _ in range(trials):
        i, j = np.random.choice(3, size=2, replace=False, p=p).asnumpy().tolist()
        assert i != j
        counts[(i, j)] = counts.get((i, j), 0) + 1
    for i in range(3):
        for j in range(3):
            if i != j:
                q = p[i] * p[j] / (1 - p[i])
                got = counts.get((i, j), 0) / trials
                assert abs(got - q) <= 6 * math.sqrt(q * (1 - q) / trials), (i, j, got, q)
    picked = np.random.choice(5, size=2, replace=False, p=[0.5, 0.0, 0.5, 0.0, 0.0]).asnumpy()
    assert sorted(picked.tolist()) == [0, 2]


def test_multinomial_counts():
    np.random.seed(11)
    p = [0.2, 0.3, 0.5]
    m = np.random.multinomial(10, p, size=(20000,))
    assert m.shape == (20000, 3) and m.dtype == onp.int64
    host = m.asnumpy()
    assert (host.sum(axis=1) == 10).all()
    for k in range(3):
        var = 10 * p[k] * (1 - p[k])
        assert abs(host[:, k].mean() - 10 * p[k]) < 6 * math.sqrt(var / 20000)
    assert np.random.multinomial(4, [0.5, 0.5]).shape == (2,)


def test_multivariate_normal_and_bernoulli():
    np.random.seed(12)
    cov = onp.array([[2.0, 0.8], [0.8, 1.0]])
    x = np.random.multivariate_normal([1.0, -1.0], cov, size=(N // 4,), dtype="float64")
    assert x.shape == (N // 4, 2)
    sample = onp.cov(x.asnumpy().T)
    n = N // 4
    for i in range(2):
        for j in range(2):
            # var of a product of jointly normal variables: s_ii s_jj + s_ij^2.
            se = math.sqrt((cov[i, i] * cov[j, j] + cov[i, j] ** 2) / n)
            assert abs(sample[i, j] - cov[i, j]) < 6 * se
    b = npx.random.bernoulli(prob=0.3, size=(N,)).asnumpy()
    assert set(onp.unique(b)) <= {0.0, 1.0}
    assert abs(b.mean() - 0.3) < 6 * math.sqrt(0.21 / N)
    b = npx.random.bernoulli(logit=0.0, size=(N,)).asnumpy()
    assert abs(b.mean() - 0.5) < 6 * math.sqrt(0.25 / N)


@pytest.mark.parametrize("call,message", [
    (lambda: np.random.choice(3, p=[0.5, 0.5, 0.2]), r"random.choice: p sums to 1.2"),
    (lambda: np.random.choice(3, p=[0.5, 0.5]), r"random.choice: p has shape \(2,\), expected"),
    (lambda: np.random.choice(3, p=[1.5, -0.5, 0.0]), r"p = \[1.5, -0.5, 0.0\] has a negative"),
    (lambda: np.random.choice(5, size=6, replace=False),
     r"random.choice: 6 draws without replacement from 5 elements"),
    (lambda: np.random.choice(4, size=3, replace=False, p=[0.5, 0.5, 0.0, 0.0]),
     r"3 draws without replacement, but only 2 of the 4 elements have a nonzero"),
    (lambda: np.random.exponential(-1.0), r"random.exponential: scale = -1.0, expected scale >= 0"),
    (lambda: np.random.gamma(0.0), r"random.gamma: shape = 0.0, expected shape > 0"),
    (lambda: np.random.gamma(1.0, [1.0, -2.0]),
     r"random.gamma: scale = \[1.0, -2.0\], expected scale >= 0"),
    (lambda: np.random.beta(1.0, -1.0), r"random.beta: b = -1.0, expected b > 0"),
    (lambda: np.random.poisson(-3.0), r"random.poisson: lam = -3.0, expected lam >= 0"),
    (lambda: np.random.pareto(0.0), r"random.pareto: a = 0.0, expected a > 0"),
    (lambda: np.random.multinomial(-1, [1.0]), r"random.multinomial: n = -1, expected"),
    (lambda: np.random.multinomial(3, [0.3, 0.3]), r"random.multinomial: p sums to 0.6"),
    (lambda: np.random.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]),
     r"cov is not positive semi-definite"),
    (lambda: npx.random.bernoulli(prob=1.5), r"random.bernoulli: prob = 1.5, expected prob <= 1"),
])
def test_invalid_parameters_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_invalid_parameters_in_arrays_give_nan():
    """Values inside Janus arrays are not read back to be checked: the samplers give NaN."""
    x = np.random.gamma(np.array([-1.0, 2.0]), dtype="float64").asnumpy()
    assert math.isnan(x[0]) and x[1] > 0


def test_normal_and_uniform_take_array_parameters():
    np.random.seed(13)
    x = np.random.normal(np.array([0.0, 100.0]), [1.0, 2.0], size=(N // 2, 2)).asnumpy()
    assert x.shape == (N // 2, 2) and x.dtype == onp.float32
    n = N // 2
    for k, (mean, sd) in enumerate([(0.0, 1.0), (100.0, 2.0)]):
        _check_moments(x[:, k].astype(onp.float64), mean, sd * sd, 3 * sd ** 4)
    u = np.random.uniform([0.0, 10.0], np.array([1.0, 14.0]), size=(n, 2)).asnumpy()
    assert (u[:, 0] >= 0).all() and (u[:, 0] < 1).all()
    assert (u[:, 1] >= 10).all() and (u[:, 1] < 14).all()
    # Uniform on [10, 14): variance 16 / 12.
    assert abs(u[:, 1].mean() - 12.0) < 6 * math.sqrt(16 / 12 / n)
    assert np.random.uniform(np.zeros((3, 1)), 1.0).shape == (3, 1)
    with pytest.raises(ValueError, match=r"random.normal: scale = \[1.0, -1.0\], expected"):
        np.random.normal([0.0, 0.0], [1.0, -1.0])


def test_npx_uniform_n_and_normal_n_prepend_the_batch_shape():
    np.random.seed(14)
    assert npx.random.uniform_n(0.0, np.array([1.0, 2.0]), batch_shape=(3,)).shape == (3, 2)
    x = npx.random.normal_n(np.zeros((2, 1)), np.ones(3), batch_shape=4)
    assert x.shape == (4, 2, 3)
    u = npx.random.uniform_n(np.array([0.0, 5.0]), 6.0, batch_shape=(N // 2,)).asnumpy()
    assert (u[:, 1] >= 5).all() and (u[:, 1] < 6).all() and (u[:, 0] < 6).all()
    assert abs(u[:, 0].mean() - 3.0) < 6 * math.sqrt(36 / 12 / (N // 2))


def test_out_receives_the_samples():
    np.random.seed(15)
    buf = np.zeros((4, 3), dtype="float64")
    got = np.random.gamma(2.0, 1.0, size=(4, 3), out=buf)
    assert got is buf and (buf.asnumpy() > 0).all()
    np.random.seed(15)
    onp.testing.assert_allclose(buf.asnumpy(), np.random.gamma(2.0, 1.0, size=(4, 3)).asnumpy(),
                                rtol=1e-6)
    with pytest.raises(ValueError, match=r"random.exponential: out has shape \(2,\), expected "
                                         r"the samples' \(3,\)"):
        np.random.exponential(size=3, out=np.zeros(2))


def test_samplers_in_a_hybridized_block_draw_afresh_and_follow_the_seed():
    from janus.gluon import nn

    class Draw(nn.HybridBlock):
        def forward(self, alpha):
            return (np.random.gamma(alpha, size=(3,)) + np.random.exponential(size=(3,))
                    + np.random.poisson(3.0, size=(3,)).astype("float32"))

    net = Draw()
    net.hybridize()
    alpha = np.array([1.0, 2.0, 3.0])
    np.random.seed(21)
    first, second = net(alpha).asnumpy(), net(alpha).asnumpy()
    np.random.seed(21)
    onp.testing.assert_array_equal(net(alpha).asnumpy(), first)
    assert not onp.array_equal(first, second)
