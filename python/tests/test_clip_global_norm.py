"""gluon.utils.clip_global_norm against MXNet 1.9.1's results (the numbers below are what its
clip_global_norm gave for the same arrays)."""
import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, init, np
from janus.gluon import nn


def test_rescales_to_the_max_norm_and_returns_the_norm_before():
    a = [np.array([3.0, 4.0]), np.array([[12.0]])]
    norm = gluon.utils.clip_global_norm(a, 1.0)
    assert isinstance(norm, float) and norm == 13.0
    onp.testing.assert_allclose(a[0].asnumpy(), [0.23076925, 0.30769232], rtol=1e-6)
    onp.testing.assert_allclose(a[1].asnumpy(), [[0.923077]], rtol=1e-6)


def test_a_norm_below_the_max_leaves_the_arrays_alone():
    a = [np.array([0.3, 0.4])]
    assert gluon.utils.clip_global_norm(a, 1.0) == pytest.approx(0.5)
    onp.testing.assert_allclose(a[0].asnumpy(), [0.3, 0.4], rtol=1e-6)


def test_without_the_finite_check_the_norm_stays_an_array():
    norm = gluon.utils.clip_global_norm([np.array([3.0, 4.0])], 1.0, check_isfinite=False)
    assert norm.shape == (1,)
    onp.testing.assert_allclose(norm.asnumpy(), [5.0])


def test_a_non_finite_norm_warns_as_mxnet_does():
    a = [np.array([float("inf"), 4.0])]
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        assert gluon.utils.clip_global_norm(a, 1.0) == float("inf")
    assert onp.isnan(a[0].asnumpy()[0]) and a[0].asnumpy()[1] == 0


def test_clips_gradients_on_two_devices_and_checks_its_arguments():
    net = nn.Dense(3, in_units=4)
    net.initialize(init.Constant(1.0), ctx=[mx.cpu(0), mx.cpu(1)])
    for ctx in (mx.cpu(0), mx.cpu(1)):
        with autograd.record():
            loss = (net(np.ones((2, 4), ctx=ctx)) ** 2).sum()
        loss.backward()
    grads = [g for p in net.collect_params().values() for g in p.list_grad()]
    before = onp.sqrt(sum((g.asnumpy() ** 2).sum() for g in grads))
    assert gluon.utils.clip_global_norm(grads, 2.0) == pytest.approx(before, rel=1e-5)
    after = onp.sqrt(sum((g.asnumpy() ** 2).sum() for g in grads))
    assert after == pytest.approx(2.0, rel=1e-5)
    with pytest.raises(ValueError, match="clip_global_norm: no arrays given"):
        gluon.utils.clip_global_norm([], 1.0)
