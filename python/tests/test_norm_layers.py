"""nn.GroupNorm and nn.InstanceNorm (C++ layers) against NumPy, imperative and hybridized, with
MXNet 1.9's arguments, parameter shapes and gradients."""
import numpy as onp
import pytest

from janus import autograd, init, np
from janus.gluon import nn

X = (onp.sin(onp.arange(2 * 6 * 5)) * 2 + 0.3).reshape(2, 6, 5).astype(onp.float32)


def group_norm_ref(x, groups, gamma, beta, eps):
    n = x.shape[0]
    xr = x.reshape(n, groups, -1).astype(onp.float64)
    y = (xr - xr.mean(2, keepdims=True)) / onp.sqrt(xr.var(2, keepdims=True) + eps)
    y = y * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
    return y.reshape(x.shape)


def instance_norm_ref(x, axis, gamma, beta, eps):
    xt = onp.swapaxes(x, 1, axis).astype(onp.float64)
    red = tuple(range(2, xt.ndim))
    y = (xt - xt.mean(red, keepdims=True)) / onp.sqrt(xt.var(red, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (xt.ndim - 2)
    y = y * gamma.reshape(shape) + beta.reshape(shape)
    return onp.swapaxes(y, 1, axis)


def run_both(block, x):
    """The block's output imperatively, then hybridized (twice: trace, then the cached graph)."""
    y = block(np.array(x)).asnumpy()
    block.hybridize()
    for _ in range(2):
        onp.testing.assert_allclose(block(np.array(x)).asnumpy(), y, rtol=1e-6, atol=1e-6)
    return y


def test_group_norm_matches_numpy_with_a_gamma_and_beta_per_group():
    gn = nn.GroupNorm(num_groups=3, epsilon=1e-3, gamma_initializer=init.Constant(1.5),
                      beta_initializer=init.Constant(-0.5))
    gn.initialize()
    assert gn.gamma.shape == (3,) and gn.beta.shape == (3,)  # MXNet 1.x: one per group
    gamma, beta = onp.full(3, 1.5), onp.full(3, -0.5)
    onp.testing.assert_allclose(run_both(gn, X), group_norm_ref(X, 3, gamma, beta, 1e-3),
                                rtol=1e-5, atol=1e-5)


def test_group_norm_on_4d_input_and_parameter_names():
    x = X.reshape(2, 6, 5, 1)
    gn = nn.GroupNorm(2)
    gn.initialize()
    assert sorted(gn.collect_params().keys()) == ["beta", "gamma"]
    onp.testing.assert_allclose(run_both(gn, x),
                                group_norm_ref(x, 2, onp.ones(2), onp.zeros(2), 1e-5),
                                rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_instance_norm_matches_numpy_on_each_axis(axis):
    inorm = nn.InstanceNorm(axis=axis, epsilon=1e-4, center=True, scale=True,
                            beta_initializer=init.Constant(0.25))
    inorm.initialize()
    y = run_both(inorm, X)
    channels = X.shape[axis]
    assert inorm.gamma.shape == (channels,)  # inferred from the input
    onp.testing.assert_allclose(
        y, instance_norm_ref(X, axis % X.ndim, onp.ones(channels), onp.full(channels, 0.25), 1e-4),
        rtol=1e-5, atol=1e-5)


def test_instance_norm_defaults_are_mxnets():
    inorm = nn.InstanceNorm(in_channels=6)
    inorm.initialize()
    assert inorm.gamma.shape == (6,)
    assert inorm.gamma.grad_req == "null"  # scale=False by default
    assert inorm.beta.grad_req == "write"


@pytest.mark.parametrize("make", [lambda: nn.GroupNorm(3), lambda: nn.InstanceNorm(scale=True)])
def test_gradients_hybridized_equal_imperative_and_finite_differences(make):
    w = onp.cos(onp.arange(X.size)).reshape(X.shape).astype(onp.float32)
    grads = []
    for hybrid in (False, True):
        net = make()
        net.initialize()
        if hybrid:
            net.hybridize()
        x = np.array(X)
        x.attach_grad()
        with autograd.record():
            loss = (net(x) * np.array(w)).sum()
        loss.backward()
        grads.append((x.grad.asnumpy(), net.gamma.grad().asnumpy(), net.beta.grad().asnumpy()))
    for a, b in zip(*grads):
        onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # A central difference on a few elements of x.
    net = make()
    net.initialize()
    f = lambda v: float((net(np.array(v)) * np.array(w)).sum().item())
    h = 1e-2
    for i in (0, 7, 31, 59):
        up, down = X.copy(), X.copy()
        up.flat[i] += h
        down.flat[i] -= h
        assert abs(grads[0][0].flat[i] - (f(up) - f(down)) / (2 * h)) < 2e-2


def test_bad_arguments_and_shapes_are_clear_errors():
    with pytest.raises(ValueError, match="num_groups is 0, expected at least 1"):
        nn.GroupNorm(0)
    with pytest.raises(ValueError, match="epsilon is 0, expected a positive value"):
        nn.InstanceNorm(epsilon=0)
    gn = nn.GroupNorm(4)
    gn.initialize()
    with pytest.raises(ValueError, match=r"has 6 channels on axis 1, expected a multiple of "
                                         r"num_groups=4"):
        gn(np.array(X))
    inorm = nn.InstanceNorm(in_channels=3)
    inorm.initialize()
    with pytest.raises(ValueError, match="has 6 channels on axis 1, expected 3"):
        inorm(np.array(X))
    with pytest.raises(ValueError, match="expected at least 3 dimensions"):
        inorm(np.array(X[0]))
