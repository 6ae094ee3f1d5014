"""Losses are blocks: hybridizable, subclassable with hybrid_forward, weighted."""
import numpy as onp
import pytest

from janus import autograd, gluon, np
from janus.gluon import nn


def test_builtin_losses_are_hybrid_blocks_and_hybridize():
    loss = gluon.loss.L2Loss()
    assert isinstance(loss, gluon.Block) and isinstance(loss, nn.HybridBlock)
    pred, label = np.array([[1.0, 3.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 2.0]])
    expected = loss(pred, label).asnumpy()
    onp.testing.assert_allclose(expected, [0.5 * (1 + 4) / 2, 0.5 * 4 / 2])
    loss.hybridize()
    for _ in range(3):
        onp.testing.assert_allclose(loss(pred, label).asnumpy(), expected)
    assert loss._trace_count == 1


def test_weight_and_sample_weight():
    pred, label = np.array([[2.0], [4.0]]), np.array([[0.0], [0.0]])
    assert gluon.loss.L1Loss(weight=3.0)(pred, label).tolist() == [6.0, 12.0]
    w = np.array([1.0, 0.0])
    assert gluon.loss.L1Loss()(pred, label, w).tolist() == [2.0, 0.0]


class MeanSquared(gluon.loss.Loss):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, pred, label):
        return F.np.mean(F.np.square(pred - label), axis=1)


def test_a_python_loss_with_hybrid_forward_trains():
    loss = MeanSquared()
    pred = np.array([[1.0, 2.0], [3.0, 5.0]])
    label = np.zeros((2, 2))
    assert loss(pred, label).tolist() == [2.5, 17.0]
    pred.attach_grad()
    loss.hybridize()
    with autograd.record():
        l = loss(pred, label)
    l.backward()
    assert pred.grad.tolist() == [[1.0, 2.0], [3.0, 5.0]]  # d/dp mean(p^2) = p over 2 elements x 2


def test_loss_errors_are_named():
    with pytest.raises(TypeError, match="L2Loss: batch_axis must be an int"):
        gluon.loss.L2Loss(batch_axis="0")
    with pytest.raises(TypeError, match="L1Loss: weight must be a number or None"):
        gluon.loss.L1Loss(weight="x")
    with pytest.raises(ValueError, match="HuberLoss: rho is 0, expected a positive value"):
        gluon.loss.HuberLoss(rho=0)
    with pytest.raises(TypeError, match="L2Loss: expected 2 input arrays"):
        gluon.loss.L2Loss()(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"label of shape \(3,\) does not match prediction of "
                                         r"shape \(2, 2\)"):
        gluon.loss.HingeLoss()(np.ones((2, 2)), np.ones((3,)))


P = onp.array([[0.5, -2.0], [1.5, 0.2]], dtype=onp.float32)
L = onp.array([[1.0, -1.0], [-1.0, 1.0]], dtype=onp.float32)


def _softmax(x):
    e = onp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("make,expected", [
    (lambda: gluon.loss.HuberLoss(rho=1.0),
     onp.where(abs(P - L) > 1, abs(P - L) - 0.5, 0.5 * (P - L) ** 2).mean(axis=1)),
    (lambda: gluon.loss.HingeLoss(), onp.maximum(0, 1 - P * L).mean(axis=1)),
    (lambda: gluon.loss.SquaredHingeLoss(), (onp.maximum(0, 1 - P * L) ** 2).mean(axis=1)),
    (lambda: gluon.loss.LogisticLoss(), onp.log1p(onp.exp(-P * L)).mean(axis=1)),
    (lambda: gluon.loss.KLDivLoss(from_logits=False),
     (_softmax(L) * (onp.log(_softmax(L)) - onp.log(_softmax(P)))).sum(axis=1)),  # MXNet 1.9 sums
])
def test_python_losses_match_numpy(make, expected):
    loss = make()
    label = L if not isinstance(loss, gluon.loss.KLDivLoss) else _softmax(L)
    out = loss(np.array(P), np.array(label))
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    loss.hybridize()
    onp.testing.assert_allclose(loss(np.array(P), np.array(label)).asnumpy(), expected,
                                rtol=1e-5, atol=1e-6)


def test_logistic_binary_labels_and_bad_format():
    binary = (L + 1) / 2
    out = gluon.loss.LogisticLoss(label_format="binary")(np.array(P), np.array(binary))
    onp.testing.assert_allclose(out.asnumpy(), onp.log1p(onp.exp(-P * L)).mean(axis=1),
                                rtol=1e-5)
    with pytest.raises(ValueError, match="label_format 'x' is not known"):
        gluon.loss.LogisticLoss(label_format="x")
