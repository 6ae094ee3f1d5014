"""Every gluon.loss class against MXNet 1.9's formulas written in NumPy: weight, batch_axis,
sample_weight (per sample and per element), pos_weight, imperative and hybridized."""
import math

import numpy as onp
import pytest

from janus import autograd, gluon, np

rng = onp.random.RandomState(0)
P = rng.randn(3, 4).astype(onp.float32)
L = onp.sign(rng.randn(3, 4)).astype(onp.float32)  # -1 or 1
B = (L > 0).astype(onp.float32)  # 0 or 1
S = rng.rand(3, 1).astype(onp.float32)  # one weight per sample
SE = rng.rand(3, 4).astype(onp.float32)  # one weight per element
PW = (rng.rand(4) + 0.5).astype(onp.float32)
CL = onp.array([0, 3, 1], dtype=onp.float32)  # class labels
T = (rng.rand(3, 4) * 3).astype(onp.float32)
D = rng.rand(3, 4).astype(onp.float32)
D /= D.sum(1, keepdims=True)  # distributions
X3 = rng.randn(2, 3, 4).astype(onp.float32)
C3 = onp.array([[0, 1, 2, 0], [2, 2, 1, 0]], dtype=onp.float32)  # classes on axis 1 of X3


def softplus(x):
    return onp.log1p(onp.exp(-abs(x))) + onp.maximum(x, 0)


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - onp.log(onp.exp(x - m).sum(axis=axis, keepdims=True))


def mean_except(x, axis=0):
    return x.mean(axis=tuple(a for a in range(x.ndim) if a != axis % x.ndim))


def bce(x, z, pw=1.0):
    return pw * z * softplus(-x) + (1 - z) * softplus(x)


def cosine(a, b):
    return (a * b).sum(-1) / onp.maximum(onp.linalg.norm(a, axis=-1) * onp.linalg.norm(b, axis=-1),
                                         1e-12)


def poisson_full(p, t):
    loss = p - t * onp.log(p + 1e-8)
    stirling = t * onp.log(t) - t + 0.5 * onp.log(2 * math.pi * t)
    return (loss + onp.where(t > 1, stirling, 0)).mean()


CASES = [
    ("L2Loss", {}, (P, L), mean_except(0.5 * (L - P) ** 2)),
    ("L2Loss-weighted", {"weight": 3.0}, (P, L, S), mean_except(1.5 * S * (L - P) ** 2)),
    ("L2Loss-batch_axis", {"batch_axis": 1}, (P, L), mean_except(0.5 * (L - P) ** 2, 1)),
    ("L1Loss-elementwise", {"weight": 2.0}, (P, L, SE), mean_except(2 * SE * abs(L - P))),
    ("SigmoidBCE", {}, (P, B), mean_except(bce(P, B))),
    ("SigmoidBCE-pos_weight", {}, (P, B, S, PW), mean_except(S * bce(P, B, PW))),
    ("SigmoidBCE-from_sigmoid", {"from_sigmoid": True}, (1 / (1 + onp.exp(-P)), B, None, PW),
     mean_except(bce(P, B, PW))),
    ("SoftmaxCE", {}, (P, CL, S),
     S[:, 0] * -log_softmax(P)[onp.arange(3), CL.astype(int)]),
    ("SoftmaxCE-dense", {"sparse_label": False}, (P, D), -(log_softmax(P) * D).sum(1) / 1),
    ("SoftmaxCE-axis1-logits", {"axis": 1, "from_logits": True}, (X3, C3),
     mean_except(-onp.take_along_axis(X3, C3.astype(int)[:, None, :], axis=1))),
    ("KLDivLoss", {"from_logits": False}, (P, D),
     (D * (onp.log(D + 1e-12) - log_softmax(P))).sum(1)),
    ("HuberLoss", {"rho": 0.5}, (P, L, SE),
     mean_except(SE * onp.where(abs(L - P) > 0.5, abs(L - P) - 0.25, abs(L - P) ** 2))),
    ("HingeLoss", {"margin": 0.5}, (P, L), mean_except(onp.maximum(0, 0.5 - P * L))),
    ("SquaredHingeLoss", {}, (P, L, S), mean_except(S * onp.maximum(0, 1 - P * L) ** 2)),
    ("LogisticLoss", {}, (P, L), mean_except(onp.log1p(onp.exp(-P * L)))),
    ("LogisticLoss-binary", {"label_format": "binary"}, (P, B),
     mean_except(onp.log1p(onp.exp(-P * L)))),
    ("TripletLoss", {"margin": 2.0}, (P, L, T),
     onp.maximum(0, ((L - P) ** 2 - (T - P) ** 2).sum(1) + 2)),
    ("PoissonNLLLoss", {}, (P, T), (onp.exp(P) - T * P).mean()),
    ("PoissonNLLLoss-full", {"from_logits": False, "compute_full": True}, (D + 0.1, T + 0.5),
     poisson_full(D + 0.1, T + 0.5)),
    ("CosineEmbeddingLoss", {"margin": 0.2}, (P, T, onp.array([1, -1, -1], dtype=onp.float32)),
     onp.where(onp.array([1, -1, -1]) == 1, 1 - cosine(P, T),
               onp.maximum(0, cosine(P, T) - 0.2))[:, None]),
]


@pytest.mark.parametrize("name,kwargs,inputs,expected", CASES, ids=[c[0] for c in CASES])
def test_losses_match_mxnet_formulas_imperative_and_hybridized(name, kwargs, inputs, expected):
    cls = {"SigmoidBCE": "SigmoidBinaryCrossEntropyLoss", "SoftmaxCE": "SoftmaxCrossEntropyLoss"}
    loss = getattr(gluon.loss, cls.get(name.split("-")[0], name.split("-")[0]))(**kwargs)
    args = [None if a is None else np.array(a) for a in inputs]
    out = loss(*args).asnumpy()
    onp.testing.assert_allclose(out, onp.asarray(expected, onp.float32).reshape(out.shape),
                                rtol=1e-5, atol=1e-5)
    assert out.shape == onp.shape(expected)
    loss.hybridize()
    for _ in range(2):
        onp.testing.assert_allclose(loss(*args).asnumpy(), out, rtol=1e-6, atol=1e-6)


def test_sample_weight_per_sample_in_any_of_three_shapes():
    loss = gluon.loss.L1Loss()
    want = mean_except(abs(L - P)) * S[:, 0]
    for w in (S, S[:, 0], onp.broadcast_to(S, P.shape).copy()):
        onp.testing.assert_allclose(loss(np.array(P), np.array(L), np.array(w)).asnumpy(), want,
                                    rtol=1e-6)
        onp.testing.assert_allclose(
            loss(np.array(P), np.array(L), sample_weight=np.array(w)).asnumpy(), want, rtol=1e-6)


def test_gradient_of_a_weighted_loss():
    x = np.array(P)
    x.attach_grad()
    with autograd.record():
        l = gluon.loss.L2Loss(weight=2.0)(x, np.array(L), np.array(SE))
    l.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * SE * (P - L) / 4, rtol=1e-5)


def test_pick_along_a_middle_axis():
    from janus import npx
    got = npx.pick(np.array(X3), np.array(C3), axis=1).asnumpy()
    onp.testing.assert_allclose(got, onp.take_along_axis(X3, C3.astype(int)[:, None, :], 1)[:, 0])


def test_wrong_number_of_inputs_is_a_type_error():
    with pytest.raises(TypeError, match="TripletLoss: expected 3 input arrays"):
        gluon.loss.TripletLoss()(np.array(P), np.array(L))
