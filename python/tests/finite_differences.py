"""Central finite differences, the reference that gradient tests compare autograd with."""
import numpy as onp


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
