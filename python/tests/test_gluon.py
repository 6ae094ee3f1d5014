"""Blocks, hybridization of Python blocks, training with gluon.Trainer."""
import os

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, init, np, npx
from janus.gluon import nn


class MLP(nn.Block):
    calls = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = nn.Dense(16, activation="relu")
        self.out = nn.Dense(3)

    def forward(self, x):
        MLP.calls += 1
        return self.out(npx.relu(self.hidden(x)) * 2)


def test_python_block_registers_children_and_params():
    net = MLP()
    net.initialize(init.Xavier())
    y = net(np.ones((4, 5)))
    assert y.shape == (4, 3)
    names = list(net.collect_params().keys())
    assert names == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert net.collect_params()["hidden.weight"].shape == (16, 5)


def test_hybridized_python_block_traces_forward_once():
    net = MLP()
    net.initialize(init.Normal(0.5))
    x = np.random.uniform(-1, 1, (4, 5))
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    MLP.calls = 0
    outs = [net(x).asnumpy() for _ in range(5)]
    assert MLP.calls == 1  # traced once, then the compiled graph runs without Python
    assert net._trace_count == 1
    for o in outs:
        onp.testing.assert_allclose(o, expected, rtol=1e-5, atol=1e-6)


def test_static_shape_accepts_a_smaller_last_batch_as_mxnet_does():
    net = MLP()
    net.initialize(init.Normal(0.5))
    x = np.random.uniform(-1, 1, (7, 5))
    expected = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    full, last = net(x[:4]), net(x[4:])  # a DataLoader's batches of 4 with last_batch='keep'
    assert net._trace_count == 2
    got = onp.concatenate([full.asnumpy(), last.asnumpy()])
    onp.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_hybridized_block_backward_matches_imperative():
    def grads(hybrid):
        mx.random.seed(3)
        net = MLP()
        net.initialize(init.Xavier())
        if hybrid:
            net.hybridize()
        x = np.random.normal(0, 1, (6, 5))
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        return net.collect_params()["hidden.weight"].grad().asnumpy()

    onp.testing.assert_allclose(grads(True), grads(False), rtol=1e-4, atol=1e-5)


class ScaledDense(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weight = gluon.Parameter("weight", shape=(3, 2))
        self.scale = self.params.get("scale", shape=(1,), init=init.Constant(2.0))

    def forward(self, x):
        return np.dot(x, self.weight.data()) * self.scale.data()


def test_python_parameters():
    blk = ScaledDense()
    blk.initialize(init.One())
    y = blk(np.ones((1, 3)))
    onp.testing.assert_allclose(y.asnumpy(), [[6.0, 6.0]])
    assert sorted(blk.collect_params().keys()) == ["scale", "weight"]


def test_set_data_copies_the_value_and_writes_the_parameter_in_place():
    dense = nn.Dense(2, in_units=3)
    dense.initialize(init.Zero())
    held = dense.weight.data()  # as a Trainer, a compiled graph or the user may hold it
    v = np.ones((2, 3))
    dense.weight.set_data(v)
    v += 1  # the caller's array stays its own, as in MXNet
    onp.testing.assert_allclose(dense.weight.data().asnumpy(), onp.ones((2, 3)))
    onp.testing.assert_allclose(held.asnumpy(), onp.ones((2, 3)))
    dense.weight.set_data(np.full((2, 3), 2.0, dtype="float64"))  # cast to the parameter's dtype
    assert dense.weight.data().dtype == onp.float32
    onp.testing.assert_allclose(held.asnumpy(), onp.full((2, 3), 2.0))
    deferred = nn.Dense(2)
    deferred.initialize()
    w = np.ones((2, 4))
    deferred.weight.set_data(w)  # before the first forward: no replica to write into yet
    w += 1
    onp.testing.assert_allclose(deferred(np.ones((1, 4))).asnumpy(), [[4.0, 4.0]])


class OldStyle(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():  # MXNet 1.x's idiom: a scope that Janus's names do not need
            self.dense = nn.Dense(2, in_units=3)

    def hybrid_forward(self, F, x):
        return F.relu(self.dense(x))


def test_hybrid_forward_style():
    blk = OldStyle(prefix="old_")
    blk.initialize(init.One())
    blk.hybridize()
    onp.testing.assert_allclose(blk(np.ones((1, 3))).asnumpy(), [[3.0, 3.0]])
    # The layers made inside name_scope are registered as without it.
    assert sorted(blk.collect_params().keys()) == ["dense.bias", "dense.weight"]


def test_sequential_layers_and_export(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, kernel_size=3, padding=1, activation="relu"), nn.BatchNorm(),
            nn.MaxPool2D(pool_size=2, strides=2), nn.AvgPool2D(pool_size=2), nn.Flatten(),
            nn.Dropout(0.5), nn.Dense(10), nn.Activation("sigmoid"))
    net.initialize(init.Xavier(), ctx=mx.cpu())
    x = np.random.uniform(size=(2, 1, 8, 8))
    y = net(x)
    assert y.shape == (2, 10) and len(net) == 8
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    prefix = str(tmp_path / "net")
    net.export(prefix, epoch=0)
    assert os.path.exists(prefix + "-symbol.json")
    files = os.listdir(tmp_path)
    assert any(f.startswith("net-0000") for f in files), files
    params = prefix + ".params"
    net.save_parameters(params)
    net2 = nn.HybridSequential()
    net2.add(nn.Conv2D(4, kernel_size=3, padding=1, activation="relu"), nn.BatchNorm(),
             nn.MaxPool2D(pool_size=2, strides=2), nn.AvgPool2D(pool_size=2), nn.Flatten(),
             nn.Dropout(0.5), nn.Dense(10), nn.Activation("sigmoid"))
    net2.load_parameters(params)
    onp.testing.assert_allclose(net2(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


def test_trainer_reduces_the_loss_of_an_mlp():
    rng = onp.random.RandomState(0)
    X = rng.normal(size=(256, 10)).astype(onp.float32)
    true_w = rng.normal(size=(10, 3)).astype(onp.float32)
    y = (X @ true_w).argmax(axis=1).astype(onp.int32)
    dataset = gluon.data.ArrayDataset(np.array(X), np.array(y, dtype="int32"))
    loader = gluon.data.DataLoader(dataset, batch_size=32, shuffle=True)
    net = nn.Sequential()
    net.add(nn.Dense(32, activation="relu"), nn.Dense(3))
    net.initialize(init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    epoch_losses = []
    for _ in range(5):
        total = 0.0
        for xb, yb in loader:
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(xb.shape[0])
            total += loss.sum().item()
        epoch_losses.append(total / len(X))
    assert epoch_losses[-1] < 0.6 * epoch_losses[0], epoch_losses
    acc = (net(np.array(X)).argmax(axis=1) == np.array(y, dtype="int64")).mean().item()
    assert acc > 0.8


def test_l2_loss_and_linear_regression():
    X = np.random.normal(0, 1, (100, 2))
    w = np.array([[2.0], [-3.4]])
    y = np.dot(X, w) + 4.2
    net = nn.Dense(1)
    net.initialize(init.Normal(sigma=0.01))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss = gluon.loss.L2Loss()
    for _ in range(100):
        with autograd.record():
            l = loss(net(X), y)
        l.backward()
        trainer.step(100)
    onp.testing.assert_allclose(net.weight.data().asnumpy().ravel(), [2.0, -3.4], atol=0.05)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), [4.2], atol=0.05)


class Twice(nn.Block):
    def forward(self, x):
        return x * 2


def test_python_child_of_sequential_outlives_its_last_python_reference():
    import gc
    net = nn.Sequential()
    net.add(Twice(), nn.Dense(2, in_units=3))  # only C++ holds Twice() after this line
    gc.collect()
    net.initialize(init.One())
    onp.testing.assert_allclose(net(np.ones((1, 3))).asnumpy(), [[6.0, 6.0]])


def test_block_without_forward_is_a_not_implemented_error():
    class Empty(nn.Block):
        pass

    with pytest.raises(NotImplementedError, match="overrides neither form of forward"):
        Empty()(np.ones(2))


def test_split_and_load_along_any_axis():
    x = np.arange(12.0).reshape(3, 4)
    parts = gluon.utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)], batch_axis=1)
    assert [p.ctx for p in parts] == [mx.cpu(0), mx.cpu(1)]
    assert parts[0].tolist() == [[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]]
    assert parts[1].tolist() == [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]]
    rows = gluon.utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)], batch_axis=0, even_split=False)
    assert [r.shape[0] for r in rows] == [2, 1] or [r.shape[0] for r in rows] == [1, 2]
    with pytest.raises(ValueError, match="batch_axis 2 is out of range"):
        gluon.utils.split_and_load(x, [mx.cpu(0)], batch_axis=2)


class _Pair(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(3)
        self.b = nn.Dense(2)

    def forward(self, x):
        return self.b(npx.relu(self.a(x)))


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_dropped_block_is_freed_with_its_children(hybridize):
    import gc
    import weakref
    net = _Pair()
    net.initialize()
    if hybridize:
        net.hybridize()  # the compiled graph must not keep the Python block alive
    net(np.ones((1, 4))).wait_to_read()
    refs = [weakref.ref(net), weakref.ref(net.a), weakref.ref(net.b)]
    seq = nn.HybridSequential()
    seq.add(_Pair())
    seq.initialize()
    seq.hybridize()
    seq(np.ones((1, 4)))
    refs.append(weakref.ref(seq))
    loss = gluon.loss.L2Loss()
    loss(np.ones((2, 1)), np.ones((2, 1)))
    refs.append(weakref.ref(loss))
    del net, seq, loss
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)
