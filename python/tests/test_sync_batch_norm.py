"""gluon.contrib.nn.SyncBatchNorm (and nn.SyncBatchNorm) on 2 and 4 logical CPU devices: a
Gluon training step (net(x_k) per device inside autograd.record(), then l.backward() per
device, then Trainer.step) gives BatchNorm's outputs, running statistics, gradients and updated
parameters on the whole batch; one device is BatchNorm; misuse fails with a clear error and
never hangs.

Tolerance: the statistics and gradient sums are in double either way, but the devices' partial
sums are combined in another order than one kernel's two passes, which can move a float32 result
by one rounding; gamma's and beta's gradients are the devices' float32 shares added in float32.
rtol=atol=1e-5 covers both with room."""
import threading

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np
from janus.base import EngineError
from janus.gluon import nn
from janus.gluon.contrib import nn as cnn

TOL = dict(rtol=1e-5, atol=1e-5)


def within_a_minute(f):
    """Runs f on another thread; fails instead of hanging the suite if it takes over a minute."""
    box = {}

    def run():
        try:
            box["value"] = f()
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "it hung"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def param(net, name):
    return next(p for k, p in net.collect_params().items() if k.endswith(name))


def set_affine(net):
    param(net, "gamma").set_data(np.array([0.5, 2.0, -1.0]))
    param(net, "beta").set_data(np.array([0.1, -0.3, 1.0]))


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("make", [lambda: cnn.SyncBatchNorm(in_channels=3),
                                  lambda: nn.SyncBatchNorm(in_channels=3)])
def test_training_step_equals_batch_norm_on_the_whole_batch(n, make):
    rng = onp.random.default_rng(3)
    x = rng.normal(1, 2, (8, 3, 2, 2)).astype("float32")
    w = rng.normal(0, 1, (8, 3, 2, 2)).astype("float32")
    ctx = [mx.cpu(k) for k in range(n)]

    ref = nn.BatchNorm(in_channels=3)
    ref.initialize()
    set_affine(ref)
    xr = np.array(x)
    xr.attach_grad()
    with autograd.record():
        yr = ref(xr)
        lr = (yr * np.array(w)).sum()
    lr.backward()
    ref_trainer = gluon.Trainer(ref.collect_params(), "sgd", {"learning_rate": 0.1})
    ref_trainer.step(1)

    net = make()
    net.initialize(ctx=ctx)
    set_affine(net)
    xs = gluon.utils.split_and_load(x, ctx)
    ws = gluon.utils.split_and_load(w, ctx)
    for xk in xs:
        xk.attach_grad()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore="device")

    def step():
        with autograd.record():
            losses = [(net(xk) * wk).sum() for xk, wk in zip(xs, ws)]
        for loss in losses:
            loss.backward()
        trainer.step(1)
        return losses

    within_a_minute(step)
    onp.testing.assert_allclose(onp.concatenate([xk.grad.asnumpy() for xk in xs]),
                                xr.grad.asnumpy(), **TOL)
    for k in range(n):
        for name in ("gamma", "beta", "running_mean", "running_var"):
            got = param(net, name).data(ctx[k]).asnumpy()
            want = param(ref, name).data().asnumpy()
            onp.testing.assert_allclose(got, want, err_msg=f"{name} on {ctx[k]}", **TOL)
        # Every replica's running statistics are bitwise the same.
        running_var = param(net, "running_var")
        assert (running_var.data(ctx[k]).asnumpy() == running_var.data(ctx[0]).asnumpy()).all()


def test_outputs_equal_batch_norm_and_one_device_is_batch_norm():
    rng = onp.random.default_rng(4)
    x = rng.normal(0, 1, (6, 3, 4)).astype("float32")
    ref = nn.BatchNorm(in_channels=3)
    ref.initialize()
    with autograd.record():
        want = ref(np.array(x)).asnumpy()
    one = cnn.SyncBatchNorm(in_channels=3)
    one.initialize()
    with autograd.record():
        assert (one(np.array(x)).asnumpy() == want).all()  # one device: BatchNorm's kernel
    net = cnn.SyncBatchNorm(in_channels=3, num_devices=2)
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    xs = gluon.utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)])
    with autograd.record():
        ys = [net(xk) for xk in xs]
    onp.testing.assert_allclose(onp.concatenate([y.asnumpy() for y in ys]), want, **TOL)
    # Inference: the running statistics, on any replica's device; hybridized too.
    net.hybridize()
    y = net(np.ones((2, 3, 4), ctx=mx.cpu(1)))
    assert y.ctx == mx.cpu(1)


def test_errors_are_clear_and_never_hang():
    with pytest.raises(ValueError, match=r"SyncBatchNorm: num_devices is 0, expected a positive"):
        cnn.SyncBatchNorm(num_devices=0)
    ctx = [mx.cpu(0), mx.cpu(1)]
    net = cnn.SyncBatchNorm(in_channels=2, num_devices=3)
    net.initialize(ctx=ctx)
    with pytest.raises(ValueError, match=r"num_devices is 3 but its parameters have replicas "
                                         r"on 2 device\(s\) \(cpu\(0\), cpu\(1\)\)"):
        with autograd.record():
            net(np.ones((2, 2, 3)))

    net = cnn.SyncBatchNorm(in_channels=2)
    net.initialize(ctx=ctx)
    x0 = np.array(onp.arange(12, dtype="float32").reshape(2, 2, 3))
    x1 = x0.copyto(mx.cpu(1))

    def twice():
        with autograd.record():
            net(x0)
            with pytest.raises(ValueError, match=r"cpu\(0\) called twice in one step \(called: "
                                                 r"\[cpu\(0\)\], not yet: \[cpu\(1\)\]\)"):
                net(x0)
            return net(x1).asnumpy()

    within_a_minute(twice)

    def early_read():
        with autograd.record():
            y0 = net(x0)
        with pytest.raises(EngineError, match=r"the forward of a step was abandoned before every "
                                              r"one of its 2 devices had called"):
            y0.asnumpy()
        with autograd.record():  # the next step works
            return [net(x0), net(x1)]

    y0, y1 = within_a_minute(early_read)
    onp.testing.assert_allclose(y0.asnumpy(), y1.asnumpy(), **TOL)

    net.hybridize()
    with pytest.raises(NotImplementedError, match=r"training across 2 devices does not "
                                                  r"hybridize"):
        with autograd.record():
            net(x0)


def make_net(norm):
    net = nn.Sequential()
    net.add(nn.Dense(6, in_units=4), norm(in_channels=6), nn.Activation("relu"),
            nn.Dense(5, in_units=6), norm(in_channels=5))
    return net


@pytest.mark.parametrize("n", [2, 4])
def test_two_layers_train_as_batch_norm_on_one_device(n):
    # Two SyncBatchNorm layers: the second one's calls read the first one's promised outputs.
    rng = onp.random.default_rng(5)
    ctx = [mx.cpu(k) for k in range(n)]
    ref = make_net(nn.BatchNorm)
    ref.initialize(mx.init.Xavier())
    net = make_net(cnn.SyncBatchNorm)
    net.initialize(ctx=ctx)
    for p, q in zip(net.collect_params().values(), ref.collect_params().values()):
        p.set_data(q.data().copy())  # set_data keeps the array it is given (no copy)
    loss = gluon.loss.L2Loss()
    ref_trainer = gluon.Trainer(ref.collect_params(), "sgd", {"learning_rate": 0.1})
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})

    def train():
        for _ in range(3):
            x = rng.normal(0, 1, (8, 4)).astype("float32")
            y = rng.normal(0, 1, (8, 5)).astype("float32")
            with autograd.record():
                lr = loss(ref(np.array(x)), np.array(y))
            lr.backward()
            ref_trainer.step(8)
            xs = gluon.utils.split_and_load(x, ctx)
            ys = gluon.utils.split_and_load(y, ctx)
            with autograd.record():
                losses = [loss(net(xk), yk) for xk, yk in zip(xs, ys)]
            for lk in losses:
                lk.backward()
            trainer.step(8)

    within_a_minute(train)
    for (name, p), q in zip(net.collect_params().items(), ref.collect_params().values()):
        for k in range(n):
            onp.testing.assert_allclose(p.data(ctx[k]).asnumpy(), q.data().asnumpy(),
                                        rtol=1e-4, atol=1e-5, err_msg=f"{name} on {ctx[k]}")
