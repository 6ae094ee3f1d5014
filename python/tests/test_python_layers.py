"""The layers composed in Python (nn.LeakyReLU, PReLU, ELU, GELU, Swish, SiLU, Identity,
HybridLambda, GlobalMaxPool2D) against NumPy formulas, imperative and hybridized; the built-in
pools' ceil_mode, and keywords a layer does not support."""
import math

import numpy as onp
import pytest

from janus import init, np
from janus.gluon import nn

H = onp.array([[-2.0, -0.5, 0.0, 1.5]], dtype=onp.float32)
SIG = 1 / (1 + onp.exp(-H))
CASES = [
    (lambda: nn.LeakyReLU(0.1), onp.where(H > 0, H, 0.1 * H)),
    (lambda: nn.ELU(0.5), onp.where(H > 0, H, 0.5 * (onp.exp(H) - 1))),
    (lambda: nn.GELU(), H * 0.5 * (1 + onp.vectorize(math.erf)(H / math.sqrt(2)))),
    (lambda: nn.Swish(), H * SIG),
    (lambda: nn.SiLU(), H * SIG),
    (lambda: nn.Identity(), H),
    (lambda: nn.HybridLambda("relu"), onp.maximum(H, 0)),
    (lambda: nn.Lambda(lambda a: a * 3), 3 * H),
]


@pytest.mark.parametrize("make,expected", CASES)
def test_python_layers_match_numpy_and_hybridize(make, expected):
    net = nn.HybridSequential()
    net.add(make())
    x = np.array(H)
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_prelu_learns_a_slope_per_channel():
    p = nn.PReLU(in_channels=2, alpha_initializer=init.Constant(0.5))
    p.initialize()
    assert list(p.collect_params().keys()) == ["alpha"]
    y = p(np.array([[[-1.0, 2.0], [-4.0, 1.0]]]))
    assert y.tolist() == [[[-0.5, 2.0], [-2.0, 1.0]]]


def test_global_max_pool():
    y = nn.GlobalMaxPool2D()(np.arange(8.0).reshape(1, 2, 2, 2))
    assert y.shape == (1, 2, 1, 1) and y.reshape(-1).tolist() == [3.0, 7.0]


def test_python_layer_errors_are_named():
    with pytest.raises(ValueError, match="'nosuch' is not an np or npx function"):
        nn.HybridLambda("nosuch")
    with pytest.raises(ValueError, match="alpha must be >= 0, got -1"):
        nn.LeakyReLU(-1)
    with pytest.raises(ValueError, match=r"expected an NCHW input \(4 axes\), got shape \(2, 3\)"):
        nn.GlobalMaxPool2D()(np.ones((2, 3)))


def _pool_reference(x, k, s, reduce, ceil):
    # MXNet's 'full' convention without padding: the last window is clipped at the input's edge.
    n, c, h, w = x.shape
    def extent(n_in):
        steps = (n_in - k + s - 1) // s if ceil else (n_in - k) // s
        return steps + 1
    out = onp.zeros((n, c, extent(h), extent(w)), onp.float32)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            window = x[:, :, i * s:i * s + k, j * s:j * s + k]
            out[:, :, i, j] = reduce(window, axis=(2, 3))
    return out


@pytest.mark.parametrize("layer, reduce", [(nn.MaxPool2D, onp.max), (nn.AvgPool2D, onp.mean)])
def test_pooling_ceil_mode_keeps_the_last_partial_window(layer, reduce):
    x = onp.random.default_rng(0).normal(size=(2, 3, 5, 7)).astype(onp.float32)
    for ceil in (False, True):
        got = layer(pool_size=2, strides=2, ceil_mode=ceil)(np.array(x)).asnumpy()
        expected = _pool_reference(x, 2, 2, reduce, ceil)
        assert got.shape == expected.shape
        # count_include_pad only concerns padding: a clipped window averages what it holds.
        onp.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_a_keyword_a_layer_does_not_support_is_refused_not_ignored():
    with pytest.raises(NotImplementedError,
                       match=r"BatchNorm: keyword argument fuse_relu=True is not supported"):
        nn.BatchNorm(fuse_relu=True)
    with pytest.raises(ValueError, match=r"MaxPool2D: layout 'CHWN' is not supported, "
                                         r"expected 'NCHW' or 'NHWC'"):
        nn.MaxPool2D(layout='CHWN')
    nn.MaxPool2D(layout='NCHW', prefix='pool_')  # the defaults and 1.x naming are accepted


@pytest.mark.parametrize("axis", [1, -3, -1])
def test_layer_norm_normalises_the_axis_it_is_given(axis):
    x = onp.random.RandomState(0).normal(size=(2, 3, 4)).astype(onp.float32)
    ln = nn.LayerNorm(axis=axis, in_channels=x.shape[axis])
    ln.initialize()
    ln.collect_params()["gamma"].set_data(np.array(onp.arange(1, x.shape[axis] + 1,
                                                          dtype=onp.float32)))
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True)
    shape = [1] * 3
    shape[axis] = x.shape[axis]
    expected = (x - mean) / onp.sqrt(var + 1e-5) * onp.arange(1, x.shape[axis] + 1).reshape(shape)
    onp.testing.assert_allclose(ln(np.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    ln.hybridize()
    onp.testing.assert_allclose(ln(np.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    bad = nn.LayerNorm(axis=3)
    bad.initialize()
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        bad(np.array(x))
