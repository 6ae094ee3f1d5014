"""The layers of MXNet 1.9.1's gluon.nn and gluon.contrib.nn beyond the 2-D ones: MaxPool1D/3D,
AvgPool1D/3D, the 1-D and 3-D global pools, ReflectionPad2D, SELU, BatchNormReLU, and contrib's
PixelShuffle1D/2D/3D, SyncBatchNorm, SparseEmbedding, Concurrent, HybridConcurrent, Identity.
Forward and gradients against MXNet 1.9.1's own outputs (tests/fixtures/mxnet/layers, written
by tests/fixtures/mxnet/make_layer_fixtures.py and make_layer_fixtures_extra.py: also
BatchNorm's use_global_stats, average pools over an empty window and the pools in channels-last
layouts), the pools also against a direct float64 NumPy reference, gradients by finite
differences, hybridized equals imperative, export and SymbolBlock.imports, and the errors."""
import glob
import itertools
import os

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np
from janus.gluon import nn
from janus.gluon.contrib import nn as cnn

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet",
                        "layers")
FIXTURE_FILES = sorted(glob.glob(os.path.join(FIXTURES, "*.npz")))


def make(ctor):
    return eval(ctor, {"nn": nn, "cnn": cnn})


def set_params(layer, fixture):
    """The parameters MXNet had (p_NAME), matched by name suffix."""
    params = dict(layer.collect_params().items())
    for key in fixture.files:
        if key.startswith("p_"):
            short = key[2:]
            [p] = [p for name, p in params.items() if name.endswith(short)]
            p.set_data(np.array(fixture[key]))
    return params


# --- MXNet 1.9.1's own numbers ----------------------------------------------------------------

def test_fixtures_cover_every_new_layer():
    names = {os.path.basename(f)[:-4] for f in FIXTURE_FILES}
    for prefix in ["maxpool1d", "maxpool3d", "avgpool1d", "avgpool3d", "globalmaxpool1d",
                   "globalmaxpool3d", "globalavgpool1d", "globalavgpool3d", "reflectionpad2d",
                   "selu", "batchnormrelu", "syncbatchnorm", "pixelshuffle1d", "pixelshuffle2d",
                   "pixelshuffle3d", "batchnorm_global_stats", "batchnormrelu_global_stats",
                   "syncbatchnorm_global_stats", "avgpool1d_empty_window_nopad",
                   "avgpool2d_empty_window_nopad", "avgpool3d_empty_window_nopad",
                   "maxpool2d_nhwc", "avgpool2d_nhwc", "maxpool1d_nwc", "avgpool3d_ndhwc",
                   "globalavgpool2d_nhwc", "globalmaxpool2d_nhwc", "globalmaxpool1d_nwc"]:
        assert any(n.startswith(prefix) for n in names), prefix


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def check_selu_gradient(f, dx):
    """MXNet 1.9.1's SELU backward computes scale * (y + alpha) for x <= 0, where y already
    carries the scale, instead of the derivative y + scale * alpha = scale * alpha * exp(x).
    Janus gives the derivative (finite differences agree, below); MXNet's fixture is checked to
    be exactly its formula, so that any other difference still fails."""
    x, dy, y = f["x"].astype(onp.float64), f["dy"].astype(onp.float64), f["y"].astype(onp.float64)
    derivative = onp.where(x > 0, SELU_SCALE, SELU_SCALE * SELU_ALPHA * onp.exp(x))
    onp.testing.assert_allclose(dx, derivative * dy, rtol=1e-5, atol=1e-5)
    mxnet_rule = onp.where(x > 0, SELU_SCALE, SELU_SCALE * (y + SELU_ALPHA))
    onp.testing.assert_allclose(f["dx"], mxnet_rule * dy, rtol=1e-5, atol=1e-5)


def check_empty_window_3d(f, y):
    """MXNet 1.9.1's 3-D average pool with count_include_pad=False gives NaN (0 / 0) for a window
    wholly in the padding, where its 1-D and 2-D pools give 0 (their fixtures hold 0); Janus gives
    0 in every dimension. The fixture is checked to hold NaN exactly at those windows (the last
    of axis D here), which must be Janus's zeros; every other value is compared as usual."""
    empty = onp.zeros(f["y"].shape, bool)
    empty[:, :, -1] = True
    assert onp.isnan(f["y"][empty]).all() and not onp.isnan(f["y"][~empty]).any()
    assert (y[empty] == 0).all()
    return onp.where(empty, 0.0, f["y"])


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: os.path.basename(p)[:-4])
def test_forward_and_gradients_equal_mxnet(path):
    f = onp.load(path)
    layer = make(str(f["ctor"]))
    layer.initialize()
    x = np.array(f["x"])
    layer(x)  # finishes deferred shapes before the parameters are set
    params = set_params(layer, f)
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    y.backward(np.array(f["dy"]))
    assert y.shape == f["y"].shape
    want = f["y"]
    if os.path.basename(path) == "avgpool3d_empty_window_nopad.npz":
        want = check_empty_window_3d(f, y.asnumpy())
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    if os.path.basename(path) == "selu.npz":
        check_selu_gradient(f, x.grad.asnumpy())
    else:
        onp.testing.assert_allclose(x.grad.asnumpy(), f["dx"], rtol=1e-4, atol=1e-5)
    for key in f.files:
        if key.startswith("g_"):
            [p] = [p for name, p in params.items() if name.endswith(key[2:])]
            onp.testing.assert_allclose(p.grad().asnumpy(), f[key], rtol=1e-4, atol=1e-5,
                                        err_msg=key)
        if key.startswith("after_"):  # the running statistics after the training step
            [p] = [p for name, p in params.items() if name.endswith(key[6:])]
            onp.testing.assert_allclose(p.data().asnumpy(), f[key], rtol=1e-5, atol=1e-5,
                                        err_msg=key)


# --- Pools against a direct float64 reference ---------------------------------------------------

def pool_ref(x, kind, k, s, p, ceil_mode, count_include_pad=True):
    """Each window of MXNet's Pooling computed directly over its box: output extent
    floor-or-ceil((n + 2p - k) / s) + 1 per axis, a window [o * s - p, o * s - p + k) clipped to
    the padded input [-p, n + p); the maximum of its elements inside x, or their sum divided by
    the clipped window's volume (count_include_pad) or by the number of elements inside x."""
    x = x.astype(onp.float64)
    dims = x.ndim - 2
    rnd = onp.ceil if ceil_mode else onp.floor
    out = [int(rnd((x.shape[2 + i] + 2 * p[i] - k[i]) / s[i])) + 1 for i in range(dims)]
    y = onp.zeros(x.shape[:2] + tuple(out))
    for o in itertools.product(*[range(e) for e in out]):
        box, padded = [], 1
        for i in range(dims):
            start = o[i] * s[i] - p[i]
            end = min(start + k[i], x.shape[2 + i] + p[i])
            padded *= end - start
            box.append(slice(max(start, 0), min(end, x.shape[2 + i])))
        window = x[(slice(None), slice(None)) + tuple(box)]
        flat = window.reshape(window.shape[:2] + (-1,))
        if flat.shape[2] == 0:  # empty (ceil_mode): 0, as Janus's avg_pool2d (see the C++ test)
            assert kind == "avg"
            continue
        if kind == "max":
            v = flat.max(axis=2)
        else:
            v = flat.sum(axis=2) / (padded if count_include_pad else flat.shape[2])
        y[(slice(None), slice(None)) + o] = v
    return y


POOLS = [
    # layer, args, kwargs, input shape
    (nn.MaxPool1D, (3, 2, 1), {}, (2, 3, 9)),
    (nn.MaxPool1D, (4, 3, 2), dict(ceil_mode=True), (1, 2, 12)),
    (nn.AvgPool1D, (3, 1, 1), dict(count_include_pad=False), (2, 2, 6)),
    (nn.AvgPool1D, (5, 2, 2), dict(ceil_mode=True, count_include_pad=False), (2, 2, 10)),
    (nn.MaxPool3D, ((2, 3, 2), (1, 2, 2), (1, 1, 0)), {}, (2, 2, 4, 6, 5)),
    (nn.MaxPool3D, (3, 2, 1), dict(ceil_mode=True), (1, 3, 6, 5, 4)),
    (nn.AvgPool3D, ((3, 2, 2), (2, 1, 2), (1, 1, 1)), {}, (2, 2, 5, 4, 5)),
    (nn.AvgPool3D, ((3, 2, 2), (2, 1, 2), (1, 1, 1)), dict(count_include_pad=False),
     (2, 2, 5, 4, 5)),
    (nn.AvgPool3D, (3, 2, 1), dict(ceil_mode=True, count_include_pad=False), (1, 2, 6, 5, 8)),
    (nn.AvgPool3D, ((4, 2, 3), (3, 2, 2), (2, 1, 1)), dict(ceil_mode=True), (1, 2, 8, 5, 6)),
    # Empty windows on H; MXNet divides 0 by 0 elements there (NaN), Janus gives 0.
    (nn.AvgPool3D, ((4, 2, 3), (3, 2, 2), (2, 1, 1)),
     dict(ceil_mode=True, count_include_pad=False), (1, 2, 8, 5, 6)),
]


def pool_args(layer, args, kw):
    dims = 1 if "1D" in layer.__name__ else 3
    k, s, p = [a if isinstance(a, tuple) else (a,) * dims for a in args]
    kind = "max" if "Max" in layer.__name__ else "avg"
    return kind, k, s, p, kw.get("ceil_mode", False), kw.get("count_include_pad", True)


@pytest.mark.parametrize("layer,args,kw,shape", POOLS)
def test_pool_equals_direct_reference_and_hybridized_equals_imperative(layer, args, kw, shape):
    net = layer(*args, **kw)
    x0 = onp.random.default_rng(1).normal(size=shape)
    want = pool_ref(x0, *pool_args(layer, args, kw))
    y = net(np.array(x0.astype(onp.float32)))
    assert y.shape == want.shape
    onp.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    y64 = net(np.array(x0))  # float64 through the same composition: the separable box exactly
    onp.testing.assert_allclose(y64.asnumpy(), want, rtol=1e-12, atol=1e-12)
    net.hybridize()
    onp.testing.assert_allclose(net(np.array(x0.astype(onp.float32))).asnumpy(), y.asnumpy(),
                                rtol=1e-6, atol=1e-6)


def finite_difference_check(net, x0, ref=None, count=8, eps=1e-6):
    """The gradient of sum(net(x) * probe) at a few entries of x against central differences
    of the same Python-API forward in float64 (or of `ref`)."""
    x = np.array(x0)
    probe = onp.random.default_rng(2).normal(size=net(x).shape)
    x.attach_grad()
    with autograd.record():
        loss = (net(x) * np.array(probe)).sum()
    loss.backward()
    f = ref or (lambda v: net(np.array(v)).asnumpy())
    rng = onp.random.default_rng(3)
    for flat in rng.choice(x0.size, size=min(count, x0.size), replace=False):
        plus, minus = x0.copy(), x0.copy()
        plus.flat[flat] += eps
        minus.flat[flat] -= eps
        num = ((f(plus) - f(minus)) * probe).sum() / (2 * eps)
        assert abs(x.grad.asnumpy().flat[flat] - num) < 1e-6 * (1 + abs(num)), flat


@pytest.mark.parametrize("layer,args,kw,shape", POOLS)
def test_pool_gradients_match_finite_differences(layer, args, kw, shape):
    x0 = onp.random.default_rng(4).normal(size=shape)
    finite_difference_check(layer(*args, **kw), x0,
                            ref=lambda v: pool_ref(v, *pool_args(layer, args, kw)))


# --- Every new layer: finite differences, hybridize, export ------------------------------------

LAYERS = [
    # constructor, input shape, float64 (parameter-free layers run in float64)
    ("nn.MaxPool1D(3, 2, 1, ceil_mode=True)", (2, 3, 10), True),
    ("nn.AvgPool1D(3, 2, 1, count_include_pad=False)", (2, 3, 10), True),
    ("nn.MaxPool3D((3, 2, 3), (2, 1, 2), (1, 0, 1))", (1, 2, 5, 4, 7), True),
    ("nn.AvgPool3D(2, ceil_mode=True)", (1, 2, 5, 4, 7), True),
    ("nn.GlobalMaxPool1D()", (2, 3, 7), True),
    ("nn.GlobalAvgPool1D()", (2, 3, 7), True),
    ("nn.GlobalMaxPool3D()", (2, 3, 3, 4, 2), True),
    ("nn.GlobalAvgPool3D()", (2, 3, 3, 4, 2), True),
    ("nn.ReflectionPad2D(2)", (2, 2, 4, 3), True),
    ("nn.ReflectionPad2D((0, 0, 0, 0, 0, 1, 2, 1))", (1, 2, 3, 4), True),
    ("nn.SELU()", (3, 7), True),
    ("cnn.PixelShuffle1D(2)", (2, 4, 3), True),
    ("cnn.PixelShuffle2D((3, 2))", (1, 12, 2, 3), True),
    ("cnn.PixelShuffle3D(2)", (1, 16, 2, 1, 3), True),
    ("nn.AvgPool1D(2, 3, 1, ceil_mode=True, count_include_pad=False)", (2, 3, 5), True),
    ("nn.AvgPool3D((2, 1, 2), (3, 1, 1), (1, 0, 0), ceil_mode=True, count_include_pad=False)",
     (1, 2, 5, 2, 3), True),
    ("nn.BatchNormReLU(in_channels=3)", (4, 3, 5), False),
    ("cnn.SyncBatchNorm(in_channels=3)", (4, 3, 2, 2), False),
    ("nn.BatchNorm(use_global_stats=True)", (4, 3, 2, 2), False),
    ("nn.MaxPool2D(3, 2, 1, layout='NHWC')", (1, 5, 6, 2), True),
    ("nn.AvgPool3D((2, 1, 2), layout='NDHWC', ceil_mode=True)", (1, 3, 2, 5, 2), True),
    ("nn.GlobalMaxPool2D(layout='NHWC')", (2, 3, 2, 3), True),
]


@pytest.mark.parametrize("ctor,shape,f64", LAYERS, ids=[c for c, _, _ in LAYERS])
def test_gradients_match_finite_differences(ctor, shape, f64):
    net = make(ctor)
    net.initialize()
    x0 = onp.random.default_rng(5).normal(size=shape)
    if f64:
        finite_difference_check(net, x0)
        return
    # BatchNorm's parameters are float32: differences of a float32 forward in training mode
    # (batch statistics), with a step and tolerance for float32.
    x = np.array(x0.astype(onp.float32))
    probe = onp.random.default_rng(2).normal(size=shape)
    x.attach_grad()
    with autograd.record():
        loss = (net(x) * np.array(probe)).sum()
    loss.backward()

    def f(v):
        with autograd.record():  # training mode: batch statistics (running ones change too)
            return float((net(np.array(v.astype(onp.float32))).asnumpy().astype(onp.float64)
                          * probe).sum())

    for flat in onp.random.default_rng(3).choice(x0.size, size=6, replace=False):
        plus, minus = x0.copy(), x0.copy()
        plus.flat[flat] += 1e-2
        minus.flat[flat] -= 1e-2
        num = (f(plus) - f(minus)) / 2e-2
        assert abs(x.grad.asnumpy().flat[flat] - num) < 2e-2 * (1 + abs(num)), flat


@pytest.mark.parametrize("ctor,shape,f64", LAYERS, ids=[c for c, _, _ in LAYERS])
def test_hybridized_equals_imperative_and_export_round_trips(tmp_path, ctor, shape, f64):
    net = nn.HybridSequential()
    net.add(make(ctor))
    net.initialize()
    x = np.array(onp.random.default_rng(6).normal(size=shape).astype(onp.float32))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6, atol=1e-6)
    prefix = str(tmp_path / "layer")
    sym, params = net.export(prefix, epoch=0)
    back = gluon.SymbolBlock.imports(sym, ["data"], params)
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["batchnorm_global_stats", "batchnormrelu_global_stats",
                                  "syncbatchnorm_global_stats"])
def test_use_global_stats_trains_hybridized_on_the_running_statistics(tmp_path, name):
    """Hybridized, in training mode, as MXNet's fixture: the running statistics normalise and
    stay unchanged; the exported graph computes the same."""
    f = onp.load(os.path.join(FIXTURES, name + ".npz"))
    net = nn.HybridSequential()
    net.add(make(str(f["ctor"])))
    net.initialize()
    x = np.array(f["x"])
    net(x)
    params = set_params(net, f)
    net.hybridize()
    for _ in range(2):  # a second training call: still the same statistics
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward(np.array(f["dy"]))
        onp.testing.assert_allclose(y.asnumpy(), f["y"], rtol=1e-5, atol=1e-5)
        onp.testing.assert_allclose(x.grad.asnumpy(), f["dx"], rtol=1e-4, atol=1e-5)
    for short in ("running_mean", "running_var"):
        [p] = [p for n, p in params.items() if n.endswith(short)]
        onp.testing.assert_array_equal(p.data().asnumpy(), f["p_" + short])
    assert "use_global_stats=True" in repr(net)
    sym, prm = net.export(str(tmp_path / "bn"), epoch=0)
    back = gluon.SymbolBlock.imports(sym, ["data"], prm)
    onp.testing.assert_allclose(back(x).asnumpy(), f["y"], rtol=1e-5, atol=1e-5)


# --- Shapes and details of MXNet ----------------------------------------------------------------

def test_output_shapes_follow_mxnet():
    assert nn.MaxPool1D()(np.ones((2, 3, 9))).shape == (2, 3, 4)
    assert nn.MaxPool3D()(np.ones((2, 3, 4, 5, 6))).shape == (2, 3, 2, 2, 3)
    assert nn.AvgPool3D(3, 2, 1, ceil_mode=True)(np.ones((1, 1, 6, 6, 6))).shape == (1, 1, 4, 4, 4)
    assert nn.GlobalAvgPool3D()(np.ones((2, 3, 4, 5, 6))).shape == (2, 3, 1, 1, 1)
    assert nn.GlobalMaxPool1D()(np.ones((2, 3, 4))).shape == (2, 3, 1)
    assert nn.ReflectionPad2D(3)(np.ones((1, 1, 4, 5))).shape == (1, 1, 10, 11)


def test_reflection_repeats_no_edge():
    x = np.array(onp.arange(3, dtype=onp.float32).reshape(1, 1, 1, 3))
    y = nn.ReflectionPad2D((0, 0, 0, 0, 0, 0, 2, 2))(x)
    onp.testing.assert_array_equal(y.asnumpy().ravel(), [2, 1, 0, 1, 2, 1, 0])


def test_selu_constants():
    y = nn.SELU()(np.array([-1.0, 0.0, 2.0])).asnumpy()
    alpha, scale = SELU_ALPHA, SELU_SCALE
    onp.testing.assert_allclose(y, [scale * alpha * (onp.exp(-1) - 1), 0, 2 * scale], rtol=1e-6)


def test_batch_norm_relu_is_relu_of_batch_norm():
    x = np.array(onp.random.default_rng(7).normal(size=(3, 4, 2)).astype(onp.float32))
    a, b = nn.BatchNorm(), nn.BatchNormReLU()
    a.initialize()
    b.initialize()
    onp.testing.assert_allclose(b(x).asnumpy(), onp.maximum(a(x).asnumpy(), 0), rtol=1e-6)


def test_pools_take_mxnet_positional_order():
    # MaxPool1D and AvgPool1D: (pool_size, strides, padding, layout, ceil_mode, ...); the 3-D
    # pools: (pool_size, strides, padding, ceil_mode, layout, ...).
    x1, x3 = np.ones((1, 1, 5)), np.ones((1, 1, 5, 5, 5))
    assert nn.MaxPool1D(2, 2, 0, "NCW", True)(x1).shape == (1, 1, 3)
    assert nn.AvgPool1D(2, 2, 0, "NCW", True, False)(x1).shape == (1, 1, 3)
    assert nn.MaxPool3D(2, 2, 0, True, "NCDHW")(x3).shape == (1, 1, 3, 3, 3)
    assert nn.AvgPool3D(2, 2, 0, True, "NCDHW", False)(x3).shape == (1, 1, 3, 3, 3)


def test_2d_pools_take_mxnet_positional_order_and_layout():
    x = np.ones((1, 1, 5, 5))
    assert nn.MaxPool2D(2, 2, 0, "NCHW", True)(x).shape == (1, 1, 3, 3)
    assert nn.AvgPool2D(2, 2, 0, True, "NCHW", False)(x).shape == (1, 1, 3, 3)
    with pytest.raises(ValueError, match=r"AvgPool2D: layout 'HWCN' is not supported, expected "
                                         r"'NCHW' or 'NHWC'"):
        nn.AvgPool2D(layout="HWCN")
    with pytest.raises(ValueError, match=r"GlobalAvgPool2D: layout 'NCW'"):
        nn.GlobalAvgPool2D(layout="NCW")
    with pytest.raises(ValueError, match=r"GlobalMaxPool2D: layout 'NCDHW'"):
        nn.GlobalMaxPool2D(layout="NCDHW")


def test_mxnet_class_names_are_all_there():
    # dir() of MXNet 1.9.1's gluon.nn and gluon.contrib.nn (the classes).
    for name in ["Activation", "AvgPool1D", "AvgPool2D", "AvgPool3D", "BatchNorm",
                 "BatchNormReLU", "Block", "Conv1D", "Conv1DTranspose", "Conv2D",
                 "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense", "Dropout", "ELU",
                 "Embedding", "Flatten", "GELU", "GlobalAvgPool1D", "GlobalAvgPool2D",
                 "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
                 "GroupNorm", "HybridBlock", "HybridLambda", "HybridSequential", "InstanceNorm",
                 "Lambda", "LayerNorm", "LeakyReLU", "MaxPool1D", "MaxPool2D", "MaxPool3D",
                 "PReLU", "ReflectionPad2D", "SELU", "Sequential", "Swish", "SymbolBlock"]:
        assert hasattr(nn, name), name
    for name in ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D",
                 "PixelShuffle2D", "PixelShuffle3D", "SparseEmbedding", "SyncBatchNorm"]:
        assert hasattr(cnn, name), name
    assert gluon.contrib.nn is cnn


def test_contrib_concurrent_and_identity():
    net = cnn.HybridConcurrent(axis=1)
    net.add(cnn.Identity(), nn.SELU())
    x = np.array([[-1.0, 2.0]])
    onp.testing.assert_allclose(net(x).asnumpy(),
                                onp.concatenate([x.asnumpy(), nn.SELU()(x).asnumpy()], axis=1))


def test_sparse_embedding_is_embedding_with_a_dense_gradient():
    emb = cnn.SparseEmbedding(5, 3)
    emb.initialize()
    idx = np.array([[0, 3], [3, 1]], dtype="int32")
    with autograd.record():
        y = emb(idx)
    y.backward(np.ones(y.shape))
    w = emb.weight.data().asnumpy()
    onp.testing.assert_allclose(y.asnumpy(), w[[[0, 3], [3, 1]]])
    grad = emb.weight.grad().asnumpy()
    assert grad.shape == (5, 3)  # dense: every row, zero where not looked up
    onp.testing.assert_allclose(grad[:, 0], [1, 1, 0, 2, 0])


# --- Errors -------------------------------------------------------------------------------------

def test_bad_arguments_name_the_layer_and_what_was_expected():
    with pytest.raises(ValueError, match=r"MaxPool1D: layout 'NCHW' is not supported, "
                                         r"expected 'NCW' or 'NWC'"):
        nn.MaxPool1D(layout="NCHW")
    with pytest.raises(ValueError, match=r"AvgPool3D: layout 'NHWC' is not supported, "
                                         r"expected 'NCDHW' or 'NDHWC'"):
        nn.AvgPool3D(layout="NHWC")
    with pytest.raises(ValueError, match=r"GlobalMaxPool3D: layout 'NCHW'"):
        nn.GlobalMaxPool3D(layout="NCHW")
    with pytest.raises(ValueError, match=r"MaxPool3D: pool_size has 2 values \[2, 2\], expected "
                                         r"1 or 3 \(depth, height, width\)"):
        nn.MaxPool3D((2, 2))
    with pytest.raises(ValueError, match=r"AvgPool1D: padding \[2\] is more than half the pool "
                                         r"size \[3\]"):
        nn.AvgPool1D(3, padding=2)
    with pytest.raises(ValueError, match=r"MaxPool1D: strides is \[0\], expected values >= 1"):
        nn.MaxPool1D(2, 0)
    with pytest.raises(NotImplementedError, match=r"MaxPool3D: keyword argument foo=1 is not "
                                                  r"supported"):
        nn.MaxPool3D(foo=1)
    with pytest.raises(mx.base.ShapeError, match=r"pool.*: input has shape \[2, 3, 4, 4\], "
                                                 r"expected 5 dimensions \[batch, channels, "
                                                 r"depth, height, width\]"):
        nn.AvgPool3D()(np.ones((2, 3, 4, 4)))
    with pytest.raises(mx.base.ShapeError, match=r"pool.*: input has shape \[1, 1, 2\], "
                                                 r"expected 5 dimensions"):
        nn.GlobalMaxPool3D()(np.ones((1, 1, 2)))
    with pytest.raises(mx.base.ShapeError, match=r"input of shape \[1, 1, 2\] is smaller than "
                                                 r"the pool \[3\]"):
        nn.MaxPool1D(3)(np.ones((1, 1, 2)))


def test_bad_arguments_of_the_other_layers():
    with pytest.raises(ValueError, match=r"ReflectionPad2D: padding has 4 values \[1, 1, 1, 1\], "
                                         r"expected 1 or 8"):
        nn.ReflectionPad2D((1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"ReflectionPad2D: padding is \[0, 0, 1, 1, 1, 1, 1, "
                                         r"1\], expected zeros for the batch and channel axes"):
        nn.ReflectionPad2D((0, 0, 1, 1, 1, 1, 1, 1))
    with pytest.raises(mx.base.ShapeError, match=r"padding \(top, bottom, left, right\) \(3, 3, 3, "
                                                 r"3\) is not below the height and width of "
                                                 r"input \[1, 1, 3, 5\]"):
        nn.ReflectionPad2D(3)(np.ones((1, 1, 3, 5)))
    with pytest.raises(mx.base.ShapeError, match=r"has 6 channels, expected a multiple of 4 "
                                                 r"\(the product of the factors \[2, 2\]\)"):
        cnn.PixelShuffle2D(2)(np.ones((1, 6, 2, 2)))
    with pytest.raises(ValueError, match=r"PixelShuffle3D: factor has 2 values \[2, 2\], "
                                         r"expected 1 or 3"):
        cnn.PixelShuffle3D((2, 2))
    with pytest.raises(NotImplementedError, match=r"BatchNorm: gamma_initializer='normal' is not "
                                                  r"supported by Janus, expected 'ones'"):
        nn.BatchNorm(gamma_initializer="normal")
    with pytest.raises(ValueError, match=r"SyncBatchNorm: num_devices is 0, expected a positive"):
        cnn.SyncBatchNorm(num_devices=0)
