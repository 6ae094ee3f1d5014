"""The legacy operators of janus/_legacy_ops.py (mx.nd.X, F.X) against MXNet 1.9.1's outputs and
input gradients, recorded in data/legacy_ops_mxnet.json by data/make_legacy_ops_fixture.py (so
this test needs no MXNet); the gradients are of backward() with its default head of ones."""
import json
import os

import numpy as onp
import pytest

import janus as mx
from janus import autograd, nd, np

with open(os.path.join(os.path.dirname(__file__), "data", "legacy_ops_mxnet.json")) as f:
    FIXTURE = json.load(f)
CASES = {c["name"]: c for c in FIXTURE["cases"]}


def _inputs(case):
    out = []
    for value, shape in zip(case["inputs"], case["input_shapes"]):
        out.append(np.array(onp.asarray(value, dtype=onp.float32).reshape(shape))
                   if shape is not None else value)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_mxnet(name):
    case = CASES[name]
    args = _inputs(case)
    fn = getattr(nd, case["op"])
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    if case["grad"] is not None:
        args[0].attach_grad()
        with autograd.record():
            y = fn(*args, **kwargs)
        (y[0] if isinstance(y, list) else y).backward()
    else:
        y = fn(*args, **kwargs)
    ys = y if isinstance(y, list) else [y]
    assert len(ys) == len(case["outputs"])
    for got, want, dtype in zip(ys, case["outputs"], case["output_dtypes"]):
        want = onp.asarray(want)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert got.dtype == onp.dtype(dtype.split("numpy.")[1].rstrip("'>"))
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    if case["grad"] is not None:
        onp.testing.assert_allclose(args[0].grad.asnumpy(), onp.asarray(case["grad"]),
                                    rtol=1e-5, atol=1e-6)


def test_the_fixture_is_mxnet_1_9_1():
    assert FIXTURE["mxnet"] == "1.9.1"


def test_softmax_output_trains_in_a_hybridized_block():
    from janus.gluon import nn

    class Net(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3)

        def hybrid_forward(self, F, x, label):
            y = F.UpSampling(x, scale=2, sample_type="nearest")
            y = F.L2Normalization(F.flatten(y))
            return F.SoftmaxOutput(self.dense(y), label, normalization="batch")

    net = Net()
    net.initialize()
    x = np.array(onp.random.RandomState(0).randn(4, 2, 2, 2).astype(onp.float32))
    label = np.array([0, 1, 2, 1])
    want = net(x, label).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x, label).asnumpy(), want, rtol=1e-5, atol=1e-6)
    with autograd.record():
        out = net(x, label)
    out.backward()
    # d loss / d bias = sum over the batch of (softmax - onehot) / batch.
    onehot = onp.eye(3)[[0, 1, 2, 1]]
    onp.testing.assert_allclose(net.dense.bias.grad().asnumpy(),
                                (want - onehot).sum(axis=0) / 4, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,error,message", [
    (lambda x: nd.SoftmaxOutput(x, np.zeros((3,))), ValueError,
     r"SoftmaxOutput: label has shape \(3,\), expected \(4,\)"),
    (lambda x: nd.SoftmaxOutput(x, np.zeros((4,)), normalization="mean"), ValueError,
     r"normalization 'mean' is not known"),
    (lambda x: nd.SoftmaxOutput(x.reshape(2, 2, 3), np.zeros((2,))), mx.base.NotSupportedError,
     r"needs multi_output=True"),
    (lambda x: nd.SoftmaxOutput(x, np.zeros((4,)), out_grad=True), mx.base.NotSupportedError,
     r"SoftmaxOutput: out_grad=True is not supported"),
    (lambda x: nd.norm(x, ord=3), ValueError, r"norm: ord = 3, expected 1 or 2"),
    (lambda x: nd.UpSampling(x.reshape(1, 1, 4, 3), scale=2, sample_type="linear"),
     ValueError, r"sample_type 'linear' is not known"),
    (lambda x: nd.UpSampling(x.reshape(1, 1, 4, 3), scale=2, sample_type="bilinear"),
     ValueError, r"'bilinear' takes data and weight, got 1 inputs"),
    (lambda x: nd.UpSampling(x.reshape(1, 1, 4, 3), np.ones((1, 1, 4, 4)), scale=2,
                             sample_type="bilinear", num_filter=2),
     ValueError, r"num_filter = 2, expected the data's 1 channels"),
    (lambda x: nd.UpSampling(x.reshape(1, 1, 4, 3), scale=0), ValueError,
     r"UpSampling: scale = 0, expected an integer >= 1"),
    (lambda x: nd.L2Normalization(x, mode="pixel"), ValueError, r"mode 'pixel' is not known"),
    (lambda x: nd.Pad(x, pad_width=(1, 1)), ValueError, r"pad_width has 2 values, expected 4"),
    (lambda x: nd.Pad(x, mode="reflect", pad_width=(0, 0, 1, 1)), mx.base.NotSupportedError,
     r"mode 'reflect' is not supported"),
    (lambda x: nd.GroupNorm(x, np.ones(2), np.zeros(2), num_groups=2), ValueError,
     r"4 channels do not divide|3 channels do not divide"),
    (lambda x: nd.broadcast_axis(x, axis=0, size=2), ValueError,
     r"axis 0 of \(4, 3\) has extent 4, expected 1"),
])
def test_bad_arguments_are_named(call, error, message):
    x = np.array(onp.arange(12, dtype=onp.float32).reshape(4, 3))
    with pytest.raises(error, match=message):
        call(x)


def test_gradient_cuts_hold_in_a_hybridized_block():
    """BlockGrad and the conditions of smooth_l1, expm1 and MAERegressionOutput go through the
    stop_gradient operator, which a hybridized graph keeps: the same values and gradients as
    imperative calls. d/dx at x: sign(x) or x (smooth_l1) + sign(x) / 5 + e^x + x."""
    from janus.gluon import nn

    class Net(nn.HybridBlock):
        def hybrid_forward(self, F, x, label):
            return (F.smooth_l1(x, scalar=1.0) + F.MAERegressionOutput(x, label) + F.expm1(x)
                    + F.BlockGrad(x) * x)

    values = onp.array([[-2.0, -0.5, 0.0005, 0.5, 2.0]], dtype=onp.float32)
    want = (onp.where(onp.abs(values) < 1, values, onp.sign(values)) + onp.sign(values) / 5
            + onp.exp(values) + values)
    for hybridize in (False, True):
        net = Net()
        if hybridize:
            net.hybridize()
        for _ in range(2):  # the second call runs the compiled graph
            x = np.array(values)
            x.attach_grad()
            with autograd.record():
                y = net(x, np.zeros((1, 5)))
            y.backward()
            onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


ARRAY_CASES = sorted(n for n, c in CASES.items() if None not in c["input_shapes"])


@pytest.mark.parametrize("name", ARRAY_CASES)
def test_matches_mxnet_in_a_hybridized_block(name):
    """The same calls through F in a hybridized block: traced, compiled, then run twice."""
    from janus.gluon import nn
    case = CASES[name]
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}

    class Call(nn.HybridBlock):
        def hybrid_forward(self, F, *inputs):
            return getattr(F, case["op"])(*inputs, **kwargs)

    net = Call()
    net.hybridize()
    args = _inputs(case)
    for _ in range(2):
        y = net(*args)
        ys = y if isinstance(y, (list, tuple)) else [y]
        for got, want in zip(ys, case["outputs"]):
            onp.testing.assert_allclose(got.asnumpy(), onp.asarray(want), rtol=1e-5, atol=1e-6)
