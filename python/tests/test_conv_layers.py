"""The convolution family of gluon.nn (Conv1D, Conv2D, Conv3D and their Transpose variants) with
MXNet 1.9's arguments: forward against a NumPy reference, gradients, hybridized equals
imperative, export and SymbolBlock.imports, deferred in_channels, errors."""
import itertools

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, init, np
from janus.gluon import nn


def _tup(v, dims):
    return (v,) * dims if isinstance(v, int) else tuple(v)


def conv_ref(x, w, b, stride, pad, dil, groups):
    """Cross-correlation of x [N, C, *in] with w [O, C / groups, *k], in float64 loops over
    kernel taps."""
    dims = x.ndim - 2
    stride, pad, dil = _tup(stride, dims), _tup(pad, dims), _tup(dil, dims)
    xp = onp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad]).astype(onp.float64)
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(dims)]
    n, c = x.shape[:2]
    o, cg = w.shape[0], w.shape[1]
    og = o // groups
    y = onp.zeros((n, o, *out))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og].astype(onp.float64)
        for tap in itertools.product(*[range(e) for e in k]):
            idx = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + stride[i] * (out[i] - 1) + 1,
                              stride[i]) for i in range(dims))
            patch = xs[(slice(None), slice(None)) + idx]  # [n, cg, *out]
            y[:, g * og:(g + 1) * og] += onp.einsum("nc...,oc->no...", patch,
                                                    ws[(slice(None), slice(None)) + tap])
    if b is not None:
        y += b.reshape((1, o) + (1,) * dims)
    return y


def deconv_ref(x, w, b, stride, pad, out_pad, dil, groups):
    """MXNet's Deconvolution: every x[n, c, i] * w[c, o, t] lands at i * stride - pad + t * dil
    (scatter form), with output_padding extending the end."""
    dims = x.ndim - 2
    stride, pad, dil = _tup(stride, dims), _tup(pad, dims), _tup(dil, dims)
    out_pad = _tup(out_pad, dims)
    n, c = x.shape[:2]
    cg, og = c // groups, w.shape[1]
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dil[i] * (k[i] - 1) + 1 + out_pad[i]
            for i in range(dims)]
    y = onp.zeros((n, og * groups, *full))
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg].astype(onp.float64)
        for tap in itertools.product(*[range(e) for e in k]):
            contrib = onp.einsum("nc...,co->no...", xs,
                                 w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap])
            idx = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + stride[i] * (x.shape[2 + i] - 1)
                              + 1, stride[i]) for i in range(dims))
            y[(slice(None), slice(g * og, (g + 1) * og)) + idx] += contrib
    crop = tuple(slice(pad[i], full[i] - pad[i]) for i in range(dims))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y += b.reshape((1, -1) + (1,) * dims)
    return y


CASES = [
    # layer, kwargs, input shape
    (nn.Conv1D, dict(channels=4, kernel_size=3, strides=2, padding=1), (2, 3, 9)),
    (nn.Conv1D, dict(channels=6, kernel_size=2, dilation=2, groups=2), (2, 4, 7)),
    (nn.Conv2D, dict(channels=4, kernel_size=(3, 2), strides=(2, 1), padding=(1, 0)),
     (2, 3, 6, 5)),
    (nn.Conv3D, dict(channels=3, kernel_size=2, padding=1, strides=(2, 1, 1)), (1, 2, 4, 5, 3)),
    (nn.Conv3D, dict(channels=4, kernel_size=(1, 2, 2), groups=2, use_bias=False),
     (2, 2, 3, 3, 3)),
    (nn.Conv1DTranspose, dict(channels=3, kernel_size=3, strides=2, output_padding=1),
     (2, 4, 5)),
    (nn.Conv2DTranspose, dict(channels=4, kernel_size=3, strides=2, padding=1, output_padding=1),
     (2, 3, 4, 5)),
    (nn.Conv2DTranspose, dict(channels=4, kernel_size=(2, 3), strides=(1, 2), dilation=2,
                              groups=2), (1, 4, 3, 3)),
    (nn.Conv3DTranspose, dict(channels=2, kernel_size=2, strides=2, padding=(0, 1, 0)),
     (1, 3, 2, 3, 2)),
]


def reference(layer, kw, x, w, b):
    transpose = "Transpose" in layer.__name__
    args = (kw.get("strides", 1), kw.get("padding", 0))
    if transpose:
        return deconv_ref(x, w, b, *args, kw.get("output_padding", 0), kw.get("dilation", 1),
                          kw.get("groups", 1))
    return conv_ref(x, w, b, *args, kw.get("dilation", 1), kw.get("groups", 1))


@pytest.mark.parametrize("layer,kw,shape", CASES)
def test_forward_matches_numpy_and_hybridized_matches_imperative(layer, kw, shape):
    net = layer(**kw)
    net.initialize(init.Xavier())
    x = np.random.uniform(-1, 1, size=shape)
    y = net(x)
    w = net.weight.data().asnumpy()
    b = net.bias.data().asnumpy() if kw.get("use_bias", True) else None
    want = reference(layer, kw, x.asnumpy(), w, b)
    assert y.shape == want.shape
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-5)
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("layer,kw,shape", CASES)
def test_gradients_match_finite_differences(layer, kw, shape):
    net = layer(**kw)
    net.initialize(init.Xavier())
    x0 = onp.random.uniform(-1, 1, size=shape).astype(onp.float32)
    x = np.array(x0)
    x.attach_grad()
    net(x)  # finishes the deferred initialization
    w0 = net.weight.data().asnumpy().astype(onp.float64)
    b0 = net.bias.data().asnumpy() if kw.get("use_bias", True) else None
    probe = onp.random.uniform(-1, 1, size=net(x).shape)
    with autograd.record():
        y = net(x)
        loss = (y * np.array(probe)).sum()
    loss.backward()

    def f(xv, wv):
        return (reference(layer, kw, xv, wv, b0) * probe).sum()

    eps = 1e-4
    x0 = x0.astype(onp.float64)
    for name, arr, grad in [("x", x0, x.grad.asnumpy()),
                            ("weight", w0, net.weight.grad().asnumpy())]:
        rng = onp.random.default_rng(0)
        for flat in rng.choice(arr.size, size=min(6, arr.size), replace=False):
            plus, minus = arr.copy(), arr.copy()
            plus.flat[flat] += eps
            minus.flat[flat] -= eps
            if name == "x":
                num = (f(plus, w0) - f(minus, w0)) / (2 * eps)
            else:
                num = (f(x0, plus) - f(x0, minus)) / (2 * eps)
            assert abs(grad.flat[flat] - num) < 1e-3 * (1 + abs(num)), (name, flat)
    if b0 is not None:
        bias_grad = probe.sum(axis=tuple(i for i in range(probe.ndim) if i != 1))
        onp.testing.assert_allclose(net.bias.grad().asnumpy(), bias_grad, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layer,kw,shape", CASES)
def test_export_and_symbolblock_imports_round_trip(tmp_path, layer, kw, shape):
    net = nn.HybridSequential()
    net.add(layer(**kw, activation="relu"))
    net.initialize(init.Xavier())
    net.hybridize()
    x = np.random.uniform(-1, 1, size=shape)
    want = net(x).asnumpy()
    prefix = str(tmp_path / "conv")
    net.export(prefix, epoch=0)
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_in_channels_is_deferred_or_given():
    deferred = nn.Conv2DTranspose(6, kernel_size=3, groups=2)
    deferred.initialize()
    assert deferred.weight.shape[0] == 0  # unknown until the first input
    deferred(np.ones((1, 4, 5, 5)))
    assert deferred.weight.shape == (4, 3, 3, 3)
    given = nn.Conv3D(5, kernel_size=(1, 2, 3), in_channels=2)
    given.initialize()
    assert given.weight.shape == (5, 2, 1, 2, 3)
    assert nn.Conv1DTranspose(4, 3, in_channels=2).weight.shape == (2, 4, 3)
    with pytest.raises(mx.base.ShapeError, match=r"has 3 channels, expected 2"):
        given(np.ones((1, 3, 4, 4, 4)))


def test_output_size_follows_mxnet_deconvolution():
    net = nn.Conv2DTranspose(2, kernel_size=4, strides=2, padding=1, output_padding=1)
    net.initialize()
    # (in - 1) * stride - 2 * padding + kernel + output_padding
    assert net(np.ones((1, 3, 7, 5))).shape == (1, 2, 15, 11)


def test_bad_arguments_name_the_layer_and_what_was_expected():
    with pytest.raises(ValueError, match=r"Conv3D: kernel_size has 2 values \[3, 3\], expected 1 "
                                         r"or 3 \(depth, height, width\)"):
        nn.Conv3D(4, kernel_size=(3, 3))
    with pytest.raises(ValueError, match=r"Conv2DTranspose: output_padding is \[2, 2\], expected "
                                         r"each value below the strides \[2, 2\]"):
        nn.Conv2DTranspose(4, kernel_size=3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match=r"Conv1D: 5 channels \(and 0 in_channels\) must divide "
                                         r"into 2 groups"):
        nn.Conv1D(5, kernel_size=3, groups=2)
    with pytest.raises(ValueError, match=r"convolution layer: layout 'NCHW' is not supported, "
                                         r"expected 'NCW' or 'NWC'"):
        nn.Conv1D(4, kernel_size=3, layout="NCHW")
    net = nn.Conv1D(4, kernel_size=3)
    net.initialize()
    with pytest.raises(mx.base.ShapeError, match=r"conv.*: input has shape \[2, 3, 4, 4\], "
                                                 r"expected 3 dimensions \[batch, channels, "
                                                 r"width\]"):
        net(np.ones((2, 3, 4, 4)))
    small = nn.Conv3D(2, kernel_size=3)
    small.initialize()
    with pytest.raises(mx.base.ShapeError, match=r"conv3d: kernel \[3, 3, 3\] \(dilation "
                                                 r"\[1, 1, 1\]\) does not fit input \[2, 2, 2\]"):
        small(np.ones((1, 1, 2, 2, 2)))
