"""Channels-last layouts (NWC, NHWC, NDHWC) of the convolutions and pools.

The pools are checked against MXNet 1.9.1's numbers with the other layer fixtures
(test_mxnet_layers.py). MXNet 1.9.1's CPU convolutions accept these layouts but fail when run,
so a channels-last convolution is checked here against the channels-first one on the
transposed input and weight, forward and backward, imperative, hybridized and exported; its
weight has MXNet's channels-last shape."""
import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np
from janus.gluon import nn

# (channels-last constructor, channels-first constructor, channels-last input shape)
CONVS = [
    (lambda l: nn.Conv1D(4, 3, 2, 1, layout=l), ("NWC", "NCW"), (2, 9, 3)),
    (lambda l: nn.Conv2D(4, (3, 2), (2, 1), (1, 0), layout=l), ("NHWC", "NCHW"), (2, 6, 5, 3)),
    (lambda l: nn.Conv2D(4, 3, padding=1, groups=2, activation="relu", layout=l),
     ("NHWC", "NCHW"), (1, 4, 4, 6)),
    (lambda l: nn.Conv3D(3, 2, dilation=(1, 2, 1), layout=l), ("NDHWC", "NCDHW"), (1, 3, 5, 3, 2)),
    (lambda l: nn.Conv2DTranspose(3, 3, 2, 1, output_padding=1, layout=l), ("NHWC", "NCHW"),
     (1, 3, 4, 2)),
    (lambda l: nn.Conv3DTranspose(4, 2, groups=2, layout=l), ("NDHWC", "NCDHW"), (1, 2, 3, 2, 4)),
]
IDS = ["conv1d", "conv2d", "conv2d_groups_relu", "conv3d_dilated", "conv2dtranspose",
       "conv3dtranspose_groups"]


def to_first(a):
    """[N, spatial..., C] -> [N, C, spatial...]."""
    return onp.moveaxis(a, -1, 1)


@pytest.mark.parametrize("make,layouts,shape", CONVS, ids=IDS)
def test_channels_last_convolution_equals_channels_first(make, layouts, shape):
    rng = onp.random.default_rng(0)
    last, first = make(layouts[0]), make(layouts[1])
    last.initialize()
    first.initialize()
    x0 = rng.normal(size=shape).astype(onp.float32)
    last(np.array(x0))  # infers the weight's shape
    first(np.array(to_first(x0)))
    w = rng.normal(size=last.weight.shape).astype(onp.float32)
    b = rng.normal(size=last.bias.shape).astype(onp.float32)
    last.weight.set_data(np.array(w))
    first.weight.set_data(np.array(to_first(w)))
    last.bias.set_data(np.array(b))
    first.bias.set_data(np.array(b))

    x, xf = np.array(x0), np.array(to_first(x0))
    x.attach_grad()
    xf.attach_grad()
    with autograd.record():
        y = last(x)
        yf = first(xf)
    dy = rng.normal(size=y.shape).astype(onp.float32)
    y.backward(np.array(dy))
    yf.backward(np.array(to_first(dy)))
    onp.testing.assert_allclose(to_first(y.asnumpy()), yf.asnumpy(), rtol=1e-5, atol=1e-5)
    onp.testing.assert_allclose(to_first(x.grad.asnumpy()), xf.grad.asnumpy(), rtol=1e-5,
                                atol=1e-5)
    onp.testing.assert_allclose(to_first(last.weight.grad().asnumpy()),
                                first.weight.grad().asnumpy(), rtol=1e-4, atol=1e-4)
    onp.testing.assert_allclose(last.bias.grad().asnumpy(), first.bias.grad().asnumpy(),
                                rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make,layouts,shape", CONVS, ids=IDS)
def test_channels_last_convolution_hybridizes_and_exports(tmp_path, make, layouts, shape):
    net = nn.HybridSequential()
    net.add(make(layouts[0]), nn.MaxPool1D(layout="NWC") if len(shape) == 3 else
            nn.GlobalAvgPool2D(layout="NHWC") if len(shape) == 4 else
            nn.GlobalMaxPool3D(layout="NDHWC"))
    net.initialize()
    x = np.array(onp.random.default_rng(1).normal(size=shape).astype(onp.float32))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6, atol=1e-6)
    sym, params = net.export(str(tmp_path / "net"), epoch=0)
    back = gluon.SymbolBlock.imports(sym, ["data"], params)
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_weights_have_mxnet_channels_last_shapes():
    # MXNet 1.9.1's weight shapes for the same layers (in_channels=3, kernel 3 x 2).
    conv = nn.Conv2D(8, (3, 2), layout="NHWC", in_channels=3)
    assert conv.weight.shape == (8, 3, 2, 3)
    grouped = nn.Conv2D(6, (3, 2), groups=3, layout="NHWC", in_channels=6)
    assert grouped.weight.shape == (6, 3, 2, 2)
    deconv = nn.Conv2DTranspose(8, (3, 2), layout="NHWC", in_channels=3)
    assert deconv.weight.shape == (3, 3, 2, 8)
    conv3 = nn.Conv3D(4, 2, layout="NDHWC")
    conv3.initialize()
    assert conv3(np.ones((1, 3, 3, 3, 5))).shape == (1, 2, 2, 2, 4)
    assert conv3.weight.shape == (4, 2, 2, 2, 5)


def test_channels_last_errors_name_the_layout():
    conv = nn.Conv2D(4, 3, layout="NHWC", in_channels=3)
    conv.initialize()
    with pytest.raises(mx.base.ShapeError, match=r"input of shape \[1, 5, 5, 4\] has 4 channels, "
                                                 r"expected 3"):
        conv(np.ones((1, 5, 5, 4)))
    with pytest.raises(mx.base.ShapeError, match=r"expected 4 dimensions \[batch, height, width, "
                                                 r"channels\]"):
        conv(np.ones((5, 5, 3)))
    pool = nn.MaxPool1D(3, layout="NWC")
    with pytest.raises(mx.base.ShapeError, match=r"input of shape \[1, 2, 4\] is smaller than the "
                                                 r"pool \[3\] with padding \[0\] on axis 1"):
        pool(np.ones((1, 2, 4)))
    with pytest.raises(ValueError, match=r"convolution layer: layout 'NHWC' is not supported, "
                                         r"expected 'NCDHW' or 'NDHWC'"):
        nn.Conv3D(4, 2, layout="NHWC")
