"""Central finite differences, the reference that gradient tests compare autograd with."""
import numpy as onp

from janus import autograd, np


def numeric_grad(f, x0, eps=1e-6):
    """d f / d x0 (x0 a NumPy array, f returning a float) by central differences, one element
    at a time."""
    g = onp.zeros_like(x0)
    for i in range(x0.size):
        plus, minus = x0.copy(), x0.copy()
        plus.flat[i] += eps
        minus.flat[i] -= eps
        g.flat[i] = (f(plus) - f(minus)) / (2 * eps)
    return g


def assert_autograd_matches(forward, a0, rtol=1e-5, atol=1e-7):
    """autograd's gradient of the scalar forward(np.array(a0)) equals numeric_grad's."""
    x = np.array(a0)
    x.attach_grad()
    with autograd.record():
        loss = forward(x)
    loss.backward()
    want = numeric_grad(lambda v: forward(np.array(v)).item(), a0)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=rtol, atol=atol)
