"""Python subclasses of the built-in layers: their forward replaces the layer's own, imperatively,
inside containers and when hybridized; ``super().forward(x)`` is the layer's computation."""
import numpy as onp

from janus import init, np
from janus.gluon import nn


class DoubledDense(nn.Dense):
    calls = 0

    def forward(self, x):
        DoubledDense.calls += 1
        return super().forward(x) * 2


class PlainDense(nn.Dense):
    pass


def test_a_subclass_forward_replaces_the_layers():
    d = DoubledDense(2, in_units=3)
    d.initialize(init.One())
    y = d(np.ones((1, 3)))
    assert y.asnumpy().tolist() == [[6.0, 6.0]]
    assert d.weight.shape == (2, 3)
    p = PlainDense(2, in_units=3)
    p.initialize(init.One())
    assert p(np.ones((1, 3))).asnumpy().tolist() == [[3.0, 3.0]]


def test_a_subclass_inside_a_hybridized_sequential_traces_once():
    net = nn.HybridSequential()
    net.add(DoubledDense(4, activation="relu"), nn.Dense(1))
    net.initialize(init.One())
    x = np.ones((2, 3))
    expected = net(x).asnumpy()
    assert expected.tolist() == [[4 * 6.0], [4 * 6.0]]
    net.hybridize()
    DoubledDense.calls = 0
    for _ in range(3):
        onp.testing.assert_allclose(net(x).asnumpy(), expected)
    assert DoubledDense.calls == 1


def test_subclasses_of_other_layers():
    class HalfActivation(nn.Activation):
        def forward(self, x):
            return super().forward(x) / 2

    a = HalfActivation("relu")
    assert a(np.array([-1.0, 4.0])).asnumpy().tolist() == [0.0, 2.0]

    class Flat(nn.Flatten):
        pass

    assert Flat()(np.ones((2, 3, 4))).shape == (2, 12)
