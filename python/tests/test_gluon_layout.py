"""MXNet 1.9.1's module layout where Gluon code relies on it: the transforms are HybridBlocks
(ToTensor, Normalize, Cast compile under hybridize; Compose hybridizes its members),
gluon.loss re-exports HybridBlock, gluon.data.SimpleDataset."""
import numpy as onp
import pytest

from janus import gluon, init, np
from janus.gluon.data.vision import transforms as T


def test_transforms_are_hybrid_blocks():
    for t in [T.ToTensor(), T.Normalize(0.5, 0.2), T.Cast(), T.Resize(4),
              T.RandomFlipLeftRight(), T.Compose([T.ToTensor()])]:
        assert isinstance(t, gluon.Block) and isinstance(t, gluon.HybridBlock), t
        assert isinstance(t, gluon.nn.HybridBlock), t


class CountingToTensor(T.ToTensor):
    calls = 0

    def forward(self, x):
        CountingToTensor.calls += 1
        return super().forward(x)


def test_hybridized_compose_traces_to_tensor_once_and_equals_imperative():
    rng = onp.random.default_rng(0)
    batch = rng.integers(0, 256, size=(3, 5, 4, 3), dtype=onp.uint8)  # [N, H, W, C]
    compose = T.Compose([CountingToTensor(), T.Normalize((0.1, 0.2, 0.3), (0.5, 0.25, 2.0))])
    want = compose(batch).asnumpy()  # a NumPy batch is accepted too
    ref = ((batch.astype(onp.float32) / 255).transpose(0, 3, 1, 2)
           - onp.array([0.1, 0.2, 0.3], onp.float32).reshape(3, 1, 1)) \
        / onp.array([0.5, 0.25, 2.0], onp.float32).reshape(3, 1, 1)
    onp.testing.assert_allclose(want, ref, rtol=1e-6, atol=1e-6)
    compose.hybridize()
    CountingToTensor.calls = 0
    for _ in range(3):
        got = compose(np.array(batch)).asnumpy()
        onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert CountingToTensor.calls == 1  # traced once, then the compiled graph
    assert compose(np.array(batch[0])).shape == (3, 5, 4)  # one image: a new signature


def test_numpy_transforms_stay_imperative_under_hybridize():
    t = T.Compose([T.Resize((2, 3)), T.ToTensor()])
    t.hybridize()
    img = onp.arange(4 * 6 * 3, dtype=onp.uint8).reshape(4, 6, 3)
    assert t(img).shape == (3, 3, 2)
    assert t(np.array(img)).shape == (3, 3, 2)


def test_transform_errors_name_the_transform():
    with pytest.raises(ValueError, match=r"ToTensor: expected an image \[H, W, C\] or a batch "
                                         r"\[N, H, W, C\], got shape \(4, 4\)"):
        T.ToTensor()(np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"Normalize: 2 values of mean for 3 channels"):
        T.Normalize((0.1, 0.2), 1.0)(np.ones((3, 2, 2)))
    with pytest.raises(TypeError, match=r"Compose: 3 is not callable"):
        T.Compose([T.ToTensor(), 3])


def test_loss_module_exports_hybrid_block():
    assert gluon.loss.HybridBlock is gluon.HybridBlock
    assert issubclass(gluon.loss.Loss, gluon.loss.HybridBlock)


def test_simple_dataset_and_loader():
    ds = gluon.data.SimpleDataset([(onp.float32(i), i % 2) for i in range(5)])
    assert len(ds) == 5 and ds[3] == (3.0, 1)
    loader = gluon.data.DataLoader(ds.transform_first(lambda v: v * 2), batch_size=2)
    batches = list(loader)
    assert len(batches) == 3
    onp.testing.assert_array_equal(batches[0][0].asnumpy(), [0.0, 2.0])
    onp.testing.assert_array_equal(batches[2][1].asnumpy(), [0])
    with pytest.raises(TypeError, match=r"SimpleDataset: int is not a sequence"):
        gluon.data.SimpleDataset(3)


class FixedHiddenMLP(gluon.nn.Block):
    """d2l's (MXNet edition) block with a constant parameter."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rand_weight = self.params.get_constant(
            'rand_weight', onp.random.default_rng(1).uniform(size=(20, 20)))
        self.dense = gluon.nn.Dense(20, activation='relu')

    def forward(self, X):
        X = self.dense(X)
        X = np.maximum(np.dot(X, self.rand_weight.data()) + 1, 0)
        X = self.dense(X)
        while np.abs(X).sum() > 1:
            X /= 2
        return X.sum()


def test_get_constant_makes_a_parameter_that_does_not_learn():
    from janus import autograd
    net = FixedHiddenMLP()
    net.initialize()
    want = onp.random.default_rng(1).uniform(size=(20, 20)).astype(onp.float32)
    onp.testing.assert_array_equal(net.rand_weight.data().asnumpy(), want)
    assert net.rand_weight.grad_req == "null" and net.rand_weight.data().dtype == onp.float32
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    x = np.array(onp.random.default_rng(2).uniform(size=(2, 20)).astype(onp.float32))
    with autograd.record():
        y = net(x)
    y.backward()
    trainer.step(1)
    onp.testing.assert_array_equal(net.rand_weight.data().asnumpy(), want)
    with pytest.raises(ValueError, match=r"get_constant: no value given for constant 'c'"):
        net.params.get_constant("c")


def test_constant_is_a_parameter_that_keeps_its_value():
    c = gluon.Constant("c", [[1.0, 2.0]])
    assert isinstance(c, gluon.Parameter) and c.grad_req == "null" and c.shape == (1, 2)
    c.initialize(init.One())  # its own value wins over the initializer passed
    onp.testing.assert_array_equal(c.data().asnumpy(), [[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"Constant: no value given for constant 'd'"):
        gluon.Constant("d", None)


def test_vision_datasets_module():
    from janus.gluon.data.vision import datasets
    assert datasets.FashionMNIST is gluon.data.vision.FashionMNIST
