"""Gradients through the Python API against hand-computed ones."""
import numpy as onp

from janus import autograd, np


def test_gradient_of_a_polynomial():
    x = np.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        y = (x * x * 3 + 2 * x).sum()
    assert not autograd.is_recording()
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy() + 2, rtol=1e-6)


def test_d2l_dot_gradient():
    x = np.arange(4.0)
    x.attach_grad()
    with autograd.record():
        y = 2 * np.dot(x, x)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), 4 * onp.arange(4.0))


def test_broadcast_and_matmul_gradients():
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([0.5, -0.5])
    x = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        loss = (np.dot(x, w) + b).sum()
    loss.backward()
    onp.testing.assert_allclose(w.grad.asnumpy(), x.asnumpy().sum(0)[:, None] * onp.ones((2, 2)))
    onp.testing.assert_allclose(b.grad.asnumpy(), [3.0, 3.0])


def test_pause_and_head_gradient():
    x = np.array([2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
        with autograd.pause():
            assert not autograd.is_recording()
            c = x * 10  # not recorded
        z = y + c.detach()
    z.backward(np.array([1.0, 2.0]))
    onp.testing.assert_allclose(x.grad.asnumpy(), [4.0, 12.0])
    assert not autograd.is_training()
