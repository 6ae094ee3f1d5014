"""Boolean-mask and negative-step indexing, % and //, gluon.metric."""
import math

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np


def test_boolean_mask_indexing_matches_numpy():
    host = onp.arange(12, dtype=onp.float32).reshape(3, 4)
    x = np.array(host)
    onp.testing.assert_array_equal((x[x > 5]).asnumpy(), host[host > 5])
    rows = np.array([True, False, True])
    onp.testing.assert_array_equal(x[rows].asnumpy(), host[[True, False, True]])
    onp.testing.assert_array_equal(x[[False, True, False]].asnumpy(), host[[False, True, False]])
    assert x[x > 100].shape == (0,)
    with pytest.raises(IndexError, match=r"boolean index of shape \(2,\) does not match"):
        x[np.array([True, False])]


def test_boolean_mask_gradient_reaches_the_picked_elements():
    x = np.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = (x[x > 0] * 2).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 0.0, 2.0]


@pytest.mark.parametrize("key", [slice(None, None, -1), slice(4, 0, -2), slice(-1, -6, -3),
                                 slice(2, 5, -1), (slice(None), slice(None, None, -1)),
                                 (slice(None, None, -2), 1)])
def test_negative_step_slices_match_numpy(key):
    host = onp.arange(30, dtype=onp.float32).reshape(6, 5)
    x = np.array(host)
    onp.testing.assert_array_equal(x[key].asnumpy(), host[key])


@pytest.mark.parametrize("a,b", [([7.0, -7.0, 7.5, -0.5], 3.0), ([7.0, -7.0, 2.0, 0.0], -3.0),
                                 ([5.0, 6.0, -1.0, 4.0], [2.0, -4.0, 3.0, 0.5])])
def test_mod_and_floor_divide_match_numpy(a, b):
    ha, hb = onp.array(a, dtype=onp.float32), onp.array(b, dtype=onp.float32)
    x = np.array(ha)
    y = np.array(hb) if isinstance(b, list) else b
    onp.testing.assert_allclose((x % y).asnumpy(), ha % hb, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose((x // y).asnumpy(), ha // hb, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(np.mod(x, y).asnumpy(), onp.mod(ha, hb), rtol=1e-6, atol=1e-6)


def test_integer_mod_keeps_the_dtype_and_reflected_forms():
    x = np.array([7, -7, 9], dtype="int64")
    r = x % 4
    assert r.dtype == onp.int64 and r.tolist() == [3, 1, 1]
    assert (x // 4).tolist() == [1, -2, 2]
    assert (10 % np.array([3.0, 4.0])).tolist() == [1.0, 2.0]
    assert (10 // np.array([3.0, 4.0])).tolist() == [3.0, 2.0]
    y = np.array([5.0, 6.0])
    y %= 4
    assert y.tolist() == [1.0, 2.0]


def test_accuracy_and_loss_metrics():
    acc = gluon.metric.Accuracy()
    assert math.isnan(acc.get()[1])
    pred = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    acc.update(np.array([1, 0, 0]), pred)
    acc.update([np.array([1])], [np.array([[0.0, 1.0]])])
    assert acc.get() == ("accuracy", 0.75) and acc.num_inst == 4
    acc.reset()
    assert acc.num_inst == 0
    loss = mx.metric.Loss()
    loss.update(None, [np.array([1.0, 2.0]), np.array([6.0])])
    assert loss.get() == ("loss", 3.0)


def test_error_metrics_and_composite():
    label, pred = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0])
    m = gluon.metric.create(["mae", "mse", "rmse"])
    m.update(label, pred)
    names, values = m.get()
    assert names == ["mae", "mse", "rmse"]
    assert values[0] == pytest.approx(1.0) and values[1] == pytest.approx(5.0 / 3)
    assert values[2] == pytest.approx(math.sqrt(5.0 / 3))
    assert dict(m.get_name_value())["mae"] == pytest.approx(1.0)


def test_metric_errors_are_named():
    with pytest.raises(ValueError, match="'f1' is not known"):
        gluon.metric.create("f1")
    with pytest.raises(ValueError, match="2 label arrays for 1 prediction arrays"):
        gluon.metric.Accuracy().update([np.ones((1,)), np.ones((1,))], [np.ones((1, 2))])
    with pytest.raises(ValueError, match=r"Accuracy: 3 labels .* shape \[2, 2\]"):
        gluon.metric.Accuracy().update(np.ones((3,)), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"MAE: labels of shape \(3,\) for predictions of shape"):
        gluon.metric.MAE().update(np.ones((3,)), np.ones((2,)))
