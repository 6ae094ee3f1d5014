"""Gluon's per-parameter lr_mult and wd_mult, as d2l's weight decay chapter sets them:
w -= lr * lr_mult * (g / batch + wd * wd_mult * w)."""
import numpy as onp
import pytest

from janus import autograd, gluon, init, np
from janus.gluon import nn


def _one_step(setup):
    net = nn.Dense(1, in_units=2)
    net.initialize(init.Constant(1.0))
    net.bias.set_data(np.ones((1,)))  # the bias has an initializer of its own (zeros)
    setup(net)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with autograd.record():
        loss = net(np.ones((1, 2))).sum()
    loss.backward()
    trainer.step(1)
    return net.weight.data().asnumpy().ravel(), net.bias.data().asnumpy().ravel()


def test_wd_mult_zero_on_the_bias_keeps_its_decay_out():
    def no_decay_on_bias(net):
        net.collect_params(".*bias").setattr("wd_mult", 0)

    w, b = _one_step(no_decay_on_bias)
    # gradient 1 for every weight and the bias; the weights decay, the bias does not.
    onp.testing.assert_allclose(w, [1 - 0.1 * (1 + 0.5)] * 2, rtol=1e-6)
    onp.testing.assert_allclose(b, [1 - 0.1 * 1], rtol=1e-6)


def test_lr_mult_scales_one_parameters_rate():
    def slow_weight(net):
        net.weight.lr_mult = 0.5

    w, b = _one_step(slow_weight)
    onp.testing.assert_allclose(w, [1 - 0.05 * (1 + 0.5)] * 2, rtol=1e-6)
    onp.testing.assert_allclose(b, [1 - 0.1 * (1 + 0.5)], rtol=1e-6)


def test_parameter_takes_the_multipliers_and_checks_them():
    p = gluon.Parameter("w", shape=(2,), lr_mult=2.0, wd_mult=0.0)
    assert (p.lr_mult, p.wd_mult) == (2.0, 0.0)
    with pytest.raises(ValueError, match="parameter 'w': wd_mult is -1, expected a finite"):
        p.wd_mult = -1
    net = nn.Dense(1, in_units=2)
    with pytest.raises(NotImplementedError, match="'lr_mul' cannot be set, expected 'grad_req', "
                                                  "'lr_mult' or 'wd_mult'"):
        net.collect_params().setattr("lr_mul", 1.0)


def test_a_parameter_assigned_to_a_block_keeps_its_multipliers():
    class Scaled(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = gluon.Parameter("w", shape=(1,), init=init.One(), lr_mult=0.5, wd_mult=0.0)

        def forward(self, x):
            return x * self.w.data()

    net = Scaled()
    assert (net.w.lr_mult, net.w.wd_mult) == (0.5, 0.0)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with autograd.record():
        loss = net(np.ones((1,))).sum()
    loss.backward()
    trainer.step(1)
    onp.testing.assert_allclose(net.w.data().asnumpy(), [1 - 0.05 * 1], rtol=1e-6)
