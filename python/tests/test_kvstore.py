"""mx.kv: create, init, push, pull, pushpull, broadcast, set_optimizer; and mx.optimizer."""
import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np


@pytest.mark.parametrize("kind", ["local", "device"])
def test_push_sums_and_pull_copies_across_devices(kind):
    kv = mx.kv.create(kind)
    assert kv.type == kind and kv.rank == 0 and kv.num_workers == 1
    kv.init(3, np.zeros((2, 3)))
    g0 = np.ones((2, 3))
    g1 = np.full((2, 3), 2.0, ctx=mx.cpu(1))
    kv.push(3, [g0, g1])
    w0, w1 = np.zeros((2, 3)), np.zeros((2, 3), ctx=mx.cpu(1))
    kv.pull(3, out=[w0, w1])
    assert w0.asnumpy().tolist() == [[3.0] * 3] * 2
    assert w1.asnumpy().tolist() == [[3.0] * 3] * 2 and w1.ctx == mx.cpu(1)


def test_list_keys_string_keys_and_pushpull_in_place():
    kv = mx.kv.create("local")
    kv.init(["a", "b"], [np.zeros((2,)), np.zeros((3,))])
    a = [np.array([1.0, 2.0]), np.array([10.0, 20.0])]
    b = [np.ones((3,)), np.ones((3,))]
    kv.pushpull(["a", "b"], [a, b])  # an allreduce: each array becomes the sum
    assert a[0].asnumpy().tolist() == [11.0, 22.0] and a[1].asnumpy().tolist() == [11.0, 22.0]
    assert b[1].asnumpy().tolist() == [2.0, 2.0, 2.0]
    out = np.zeros((2,))
    kv.pull("a", out=out)  # without an optimizer the stored value stays as initialised
    assert out.asnumpy().tolist() == [0.0, 0.0]
    outs = [np.zeros((4,)), np.zeros((4,))]
    kv.broadcast("c", np.arange(4.0), out=outs)
    assert outs[1].asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_set_optimizer_updates_the_stored_value():
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    kv.init(0, np.ones((2,)))
    kv.push(0, [np.ones((2,)), np.ones((2,))])  # gradient 2: w = 1 - 0.5 * 2
    w = np.zeros((2,))
    kv.pull(0, out=w)
    onp.testing.assert_allclose(w.asnumpy(), [0.0, 0.0], atol=1e-6)


def test_trainer_takes_an_optimizer_object():
    w = gluon.Parameter("w", shape=(2,), init=mx.init.One())
    w.initialize()
    trainer = gluon.Trainer([w], mx.optimizer.SGD(learning_rate=0.25), kvstore="local")
    with autograd.record():
        loss = (w.data() * 2).sum()
    loss.backward()
    trainer.step(1)
    onp.testing.assert_allclose(w.data().asnumpy(), [0.5, 0.5], atol=1e-6)
    assert trainer.learning_rate == 0.25


def test_bad_input_is_named():
    with pytest.raises(mx.MXNetError, match="nosuch"):
        mx.kv.create("nosuch")
    kv = mx.kv.create("local")
    kv.init(1, np.zeros((2,)))
    with pytest.raises(ValueError, match="initialised|initialized|1"):
        kv.init(1, np.zeros((2,)))
    with pytest.raises(mx.MXNetError, match="not initiali|unknown|7"):
        kv.push(7, np.ones((2,)))
    with pytest.raises(ValueError, match=r"\[2\]|shape"):
        kv.push(1, np.ones((3,)))
    with pytest.raises(TypeError, match="a key is an int or a str"):
        kv.push(1.5, np.ones((2,)))
    with pytest.raises(ValueError, match="2 keys need a list of 2 values"):
        kv.init([4, 5], np.zeros((2,)))
    with pytest.raises(TypeError, match="needs ndarrays, got list"):
        kv.push(1, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="out .* is required"):
        kv.pull(1)
    with pytest.raises(ValueError, match="'momentom'"):
        mx.optimizer.SGD(momentom=0.9)
    with pytest.raises(ValueError, match="'rmsprop' is not known"):
        mx.optimizer.create("rmsprop")


def test_trainer_uses_the_kvstore_it_is_given():
    kv = mx.kv.create("local")
    w = gluon.Parameter("w", shape=(2,), init=mx.init.One())
    w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.5}, kvstore=kv)
    with autograd.record():
        losses = [(w.data(c) * 2).sum() for c in (mx.cpu(0), mx.cpu(1))]
    for l in losses:
        l.backward()
    trainer.step(1)  # the summed gradient 4 per element: w = 1 - 0.5 * 4
    for c in (mx.cpu(0), mx.cpu(1)):
        onp.testing.assert_allclose(w.data(c).asnumpy(), [-1.0, -1.0], atol=1e-6)
    with pytest.raises(TypeError, match="kvstore must be a name or an mx.kv store, got 3"):
        gluon.Trainer([w], "sgd", kvstore=3)
