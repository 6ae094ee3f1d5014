"""gluon.model_zoo.vision against MXNet 1.9.1's model zoo (tests/fixtures/mxnet/model_zoo,
written by make_model_zoo_fixtures.py): every model's parameter names and shapes, the outputs
of a few with deterministic parameters and of mobilenet0.25 with MXNet's saved parameters,
pretrained loading and the errors."""
import json
import os
import shutil

import numpy as onp
import pytest

import janus as mx
from janus import np
from janus.gluon.model_zoo import vision

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet",
                        "model_zoo")
with open(os.path.join(FIXTURES, "shapes.json")) as _f:
    SHAPES = json.load(_f)
OUTPUTS = dict(onp.load(os.path.join(FIXTURES, "outputs.npz")))


def test_the_fixture_covers_every_model():
    assert sorted(SHAPES) == sorted(vision._models)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_parameter_names_and_shapes_equal_mxnets_once_built(name):
    """MXNet's structural names, in its order, and its shapes after a forward. A built model
    knows every shape but those that depend on the image: the first layer's input channels
    (0 until the first forward) and the input of a Dense after a Flatten."""
    net = vision.get_model(name)
    expected = SHAPES[name]["params"]
    got = [[k, list(p.shape)] for k, p in net.collect_params().items()]
    assert [k for k, _ in got] == [k for k, _ in expected]
    deferred = []
    for (k, shape), (_, want) in zip(got, expected):
        if 0 in shape:
            deferred.append(k)
            assert len(shape) == len(want) and all(s in (0, w) for s, w in zip(shape, want)), k
        else:
            assert shape == want, k
    first = got[0][0].rsplit(".", 1)[0]
    image_dependent = [k for k in deferred if not k.startswith(first + ".")
                       and not (name.startswith("resnet") and name.endswith("_v2")
                                and k == "features.1.weight")]
    assert len(image_dependent) <= 1 and all(k.endswith("weight") for k in image_dependent)


def pattern(shape, seed, scale, offset=0.0):
    """make_model_zoo_fixtures.py's deterministic values."""
    n = int(onp.prod(shape))
    return (offset + scale * onp.sin(onp.arange(n) * 0.37 + seed)).reshape(shape) \
        .astype(onp.float32)


def pattern_params(items):
    """make_model_zoo_fixtures.py's parameters by name."""
    out = {}
    for i, (k, shape, grad_req) in enumerate(items):
        kind = k.rsplit(".", 1)[1]
        if kind in ("gamma", "beta") and grad_req == "null":  # fixed: kept as initialised
            out[k] = onp.full(shape, 1.0 if kind == "gamma" else 0.0, onp.float32)
        elif kind == "weight":
            fan_in = int(onp.prod(shape[1:])) if len(shape) > 1 else 1
            out[k] = pattern(shape, i, (3.0 / fan_in) ** 0.5)
        elif kind in ("gamma", "running_var"):
            out[k] = pattern(shape, i, 0.2, 1.0)
        else:
            out[k] = pattern(shape, i, 0.1)
    return out


# Each kind of block, on the smallest input that MXNet's model takes (a forward of the larger
# models costs seconds: their first calls create each layer's kernels).
@pytest.mark.parametrize("name", ["resnet18_v1", "resnet50_v2", "vgg11_bn", "alexnet",
                                  "mobilenetv2_0.25", "squeezenet1.1"])
def test_after_a_forward_shapes_and_outputs_equal_mxnets(name):
    """All shapes once the first forward has inferred the image-dependent ones; then, with the
    fixture's deterministic parameters, MXNet's output."""
    net = vision.get_model(name)
    net.initialize()
    side = SHAPES[name]["side"]
    x = np.array(pattern((1, 3, side, side), 0.5, 1.0))
    assert net(x).shape == (1, 1000)
    params = net.collect_params()
    assert [[k, list(p.shape)] for k, p in params.items()] == SHAPES[name]["params"]
    for k, v in pattern_params([(k, p.shape, p.grad_req) for k, p in params.items()]).items():
        params[k].set_data(np.array(v))
    expected = OUTPUTS[name]
    onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-4,
                                atol=1e-4 * onp.abs(expected).max())


def _blocks():
    from janus.gluon.model_zoo.vision import densenet, inception
    return {"inception_a": (lambda: inception._mixed_a(192, 32)[0], 192, 5),
            "inception_b": (lambda: inception._mixed_b(288)[0], 288, 5),
            "inception_c": (lambda: inception._mixed_c(768, 128)[0], 768, 5),
            "inception_d": (lambda: inception._mixed_d(768)[0], 768, 5),
            "inception_e": (lambda: inception._mixed_e(1280)[0], 1280, 3),
            "densenet_stage": (lambda: densenet._dense_stage(64, 2, 4, 32, 0), 64, 6),
            "densenet_transition": (lambda: densenet._transition(128, 64), 128, 6)}


@pytest.mark.parametrize("name", sorted(_blocks()))
def test_inception_and_densenet_blocks_give_mxnets_outputs(name):
    """The blocks of the models too large to run whole here (their names and shapes are
    checked above), each with deterministic parameters on a small input."""
    make, channels, side = _blocks()[name]
    block = make()
    block.initialize()
    params = block.collect_params()
    for k, v in pattern_params([(k, p.shape, p.grad_req) for k, p in params.items()]).items():
        params[k].set_data(np.array(v))
    expected = OUTPUTS["block:" + name]
    got = block(np.array(pattern((1, channels, side, side), 0.5, 1.0))).asnumpy()
    assert got.shape == expected.shape
    onp.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * onp.abs(expected).max())


@pytest.mark.parametrize("name,kwargs", [("resnet18_v2", {"thumbnail": True}),
                                         ("mobilenetv2_0.25", {})])
def test_forward_with_classes_hybridized(name, kwargs):
    net = vision.get_model(name, classes=7, **kwargs)
    net.initialize(mx.init.Xavier())
    x = np.random.uniform(size=(2, 3, 16, 16))
    y = net(x)
    assert y.shape == (2, 7)
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-4, atol=1e-5)
    if kwargs.get("thumbnail"):  # a 3x3 convolution instead of the 7x7 one and its pooling
        assert net.collect_params()["features.1.weight"].shape == (64, 3, 3, 3)


def mobilenet_fixture():
    x = onp.load(os.path.join(FIXTURES, "mobilenet0.25-input.npy"))
    y = onp.load(os.path.join(FIXTURES, "mobilenet0.25-output.npy"))
    return x, y


def test_batch_norm_without_scale_ignores_gamma_as_mxnet():
    from janus.gluon import nn
    bn = nn.BatchNorm(scale=False, in_channels=2)
    bn.initialize()
    bn.collect_params()["gamma"].set_data(np.array(onp.array([2.0, 3.0], onp.float32)))
    bn.collect_params()["beta"].set_data(np.array(onp.array([0.5, 0.5], onp.float32)))
    # MXNet 1.9.1 gives 1 / sqrt(1 + 1e-5) + 0.5 for both channels.
    onp.testing.assert_allclose(bn(np.ones((1, 2, 1, 1))).asnumpy().ravel(), [1.499995] * 2,
                                rtol=1e-6)


def test_mobilenet_with_mxnets_parameters_gives_mxnets_output():
    x, expected = mobilenet_fixture()
    net = vision.mobilenet0_25(classes=10)
    net.load_parameters(os.path.join(FIXTURES, "mobilenet0.25.params"))
    got = net(np.array(x)).asnumpy()
    assert got.shape == expected.shape == (2, 10)
    onp.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    net.hybridize()
    onp.testing.assert_allclose(net(np.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-4)


def test_pretrained_loads_the_file_in_root(tmp_path):
    x, expected = mobilenet_fixture()
    shutil.copy(os.path.join(FIXTURES, "mobilenet0.25.params"),
                tmp_path / "mobilenet0.25-0123abcd.params")
    # Another model's file beside it is not taken for this one.
    (tmp_path / "mobilenetv2_0.25-0123abcd.params").write_bytes(b"")
    net = vision.get_model("MobileNet0.25", pretrained=True, classes=10, root=str(tmp_path),
                           ctx=mx.cpu())
    onp.testing.assert_allclose(net(np.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-4)


def test_pretrained_without_the_file_says_where_to_put_it(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    msg = str(e.value)
    assert os.path.join(str(tmp_path), "resnet18_v1") + "-*.params" in msg
    assert "cannot be downloaded" in msg
    (tmp_path / "vgg11_bn-aaaa.params").write_bytes(b"")
    (tmp_path / "vgg11_bn-bbbb.params").write_bytes(b"")
    with pytest.raises(ValueError, match="several .* vgg11_bn-aaaa.params, vgg11_bn-bbbb.params"):
        vision.vgg11_bn(pretrained=True, root=str(tmp_path))


def test_unknown_names_and_arguments():
    with pytest.raises(ValueError, match="no model 'resnet19_v1'.*resnet18_v1"):
        vision.get_model("resnet19_v1")
    with pytest.raises(ValueError, match="20 layers"):
        vision.get_resnet(1, 20)
    with pytest.raises(ValueError, match="version 3"):
        vision.get_resnet(3, 18)
    with pytest.raises(ValueError, match="'1.2'"):
        vision.SqueezeNet("1.2")
    with pytest.raises(ValueError, match="12 layers"):
        vision.get_vgg(12)
