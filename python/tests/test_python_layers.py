"""The layers composed in Python (nn.LeakyReLU, PReLU, ELU, GELU, Swish, SiLU, Identity,
HybridLambda, GlobalMaxPool2D) against NumPy formulas, imperative and hybridized."""
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
