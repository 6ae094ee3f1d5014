"""Seed 002 (d2l chapter 12, "Computational Performance"), cell by cell, with only the import
changed (``from mxnet import ...`` -> ``from janus import ...``). Each test is one cell (or a
cell with the one before it that it needs) and asserts the effect the seed shows where that
effect is deterministic: values, shapes, what prints while tracing, the files export writes,
how many engine operations a call pushes. Timings are printed by the cells' own ``Benchmark``
and never asserted (python/bench/seed002_bench.py measures them as ratios).

Two things differ from the notebook, both outside the cells' code:
- ``d2l`` (Timer, try_gpu) is not a dependency: the small stand-in below has d2l's behaviour.
- The sizes of the heavy cells (150 batches of 1024 x 512 through a 2048-wide MLP, 2000 x 2000
  products) take minutes on two cores; they read SIZE below, which shrinks them unless
  JANUS_SEED_FULL=1 asks for the seed's own sizes.
"""
import math
import os
import random  # noqa: F401  (the seed's import cell)
import subprocess
import time
import types

import numpy
import pytest

from janus import autograd, np, npx, gluon, init  # noqa: F401  (was: from mxnet import ...)
from janus.gluon import loss as gloss  # noqa: F401
from janus.gluon import rnn  # noqa: F401
from janus.gluon import nn
import janus as mx

npx.set_np()

FULL = os.environ.get("JANUS_SEED_FULL") == "1"
SIZE = types.SimpleNamespace(
    num_batches=150 if FULL else 6, batch_size=1024 if FULL else 64,
    n=2000 if FULL else 200, loops=1000 if FULL else 50)


class _D2L:
    """The two pieces of d2l that the seed uses."""

    class Timer:
        def __init__(self):
            self.start()

        def start(self):
            self.tik = time.time()

        def stop(self):
            return time.time() - self.tik

    @staticmethod
    def try_gpu(i=0):
        return npx.gpu(i) if npx.num_gpus() >= i + 1 else npx.cpu()


d2l = _D2L()


class Benchmark:  # In [6]
    def __init__(self, description='Done'):
        self.description = description

    def __enter__(self):
        self.timer = d2l.Timer()
        return self

    def __exit__(self, *args):
        print(f'{self.description}: {self.timer.stop():.4f} sec')


def pushes():
    """Operations pushed to the engine so far."""
    return mx._janus._engine_stats()["pushed"]


# 12.1 Compilers and Interpreters ------------------------------------------------------------

def test_cell2_imperative_program(capsys):
    def add(a, b):
        return a + b

    def fancy_func(a, b, c, d):
        e = add(a, b)
        f = add(c, d)
        g = add(e, f)
        return g

    print(fancy_func(1, 2, 3, 4))
    assert capsys.readouterr().out == "10\n"


def test_cell3_symbolic_program(capsys):
    def add_():
        return '''
def add(a, b):
    return a + b
'''

    def fancy_func_():
        return '''
def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g
'''

    def evoke_():
        return add_() + fancy_func_() + 'print(fancy_func(1, 2, 3, 4))'

    prog = evoke_()
    print(prog)
    y = compile(prog, '', 'exec')
    exec(y, {})
    assert capsys.readouterr().out.endswith("print(fancy_func(1, 2, 3, 4))\n10\n")


# factory for networks (In [4])
def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize()
    return net


def test_cells4_5_hybridize_keeps_the_result():
    x = np.random.normal(size=(1, 512))
    net = get_net()
    y = net(x)
    assert y.shape == (1, 2)
    net.hybridize()
    numpy.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


def test_cell7_hybridized_calls_cost_one_push_each():
    x = np.random.normal(size=(1, 512))
    net = get_net()
    with Benchmark('Without hybridization'):
        for i in range(SIZE.loops):
            net(x)
        npx.waitall()
    expected = net(x).asnumpy()
    before = pushes()
    net(x)
    imperative = pushes() - before

    net.hybridize()
    with Benchmark('With hybridization'):
        for i in range(SIZE.loops):
            net(x)
        npx.waitall()
    before = pushes()
    y = net(x)
    hybridized = pushes() - before
    # Imperatively each layer's dot, bias and relu is its own operation; the hybridized net is
    # one cached graph, pushed as one operation.
    assert imperative >= 3
    assert hybridized == 1
    assert net._trace_count == 1
    numpy.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_cell8_export_writes_mxnet_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir('models')
    x = np.random.normal(size=(1, 512))
    net = get_net()
    net.hybridize()
    expected = net(x).asnumpy()
    net.export('./models/my_mlp')
    assert sorted(os.listdir('models')) == ['my_mlp-0000.params', 'my_mlp-symbol.json']
    # The description is a JSON graph whose first node is the input, as in the seed's `head`.
    import json
    graph = json.load(open('models/my_mlp-symbol.json'))
    assert graph['nodes'][0]['name'] == 'data'
    assert graph['nodes'][0]['op'] is None  # Janus's graph format: a variable has no op
    back = gluon.SymbolBlock.imports('models/my_mlp-symbol.json', ['data'],
                                     'models/my_mlp-0000.params')
    numpy.testing.assert_allclose(back(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)


class HybridNet(nn.HybridBlock):  # In [9]
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(4)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('module F: ', F)
        print('value  x: ', x)
        x = F.npx.relu(self.hidden(x))
        print('result  : ', x)
        return self.output(x)


def test_cells10_12_hybrid_net_prints_only_while_tracing(capsys):
    net = HybridNet()  # In [10]
    net.initialize()
    x = np.random.normal(size=(1, 3))
    y10 = net(x)
    out = capsys.readouterr().out
    assert out.count('module F: ') == 1
    assert 'value  x:  [[' in out  # imperative: real values print
    assert y10.shape == (1, 2)

    net.hybridize()  # In [11]: traced once, printing symbols
    y11 = net(x)
    out = capsys.readouterr().out
    assert out.count('module F: ') == 1
    assert '_Symbol' in out and '[[' not in out

    y12 = net(x)  # In [12]: the cached graph runs; nothing prints
    assert capsys.readouterr().out == ''
    numpy.testing.assert_allclose(y11.asnumpy(), y10.asnumpy(), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(y12.asnumpy(), y10.asnumpy(), rtol=1e-5, atol=1e-6)


# 12.2 Asynchronous Computation ----------------------------------------------------------------

def test_cells13_14_issue_returns_before_the_work_is_done():
    with Benchmark('numpy'):
        for _ in range(10):
            a = numpy.random.normal(size=(SIZE.n, SIZE.n))
            b = numpy.dot(a, a)
    with Benchmark('mxnet.np'):
        for _ in range(10):
            a = np.random.normal(size=(SIZE.n, SIZE.n))
            b = np.dot(a, a)
    with Benchmark():
        for _ in range(10):
            a = np.random.normal(size=(SIZE.n, SIZE.n))
            b = np.dot(a, a)
        npx.waitall()
    assert mx._janus._engine_stats()["in_flight"] == 0
    numpy.testing.assert_allclose(b.asnumpy(), a.asnumpy() @ a.asnumpy(), rtol=1e-3, atol=1e-3)


def test_cell15_dependency_graph():
    x = np.ones((1, 2))
    y = np.ones((1, 2))
    z = x * y + 2
    assert repr(z) == 'array([[3., 3.]])'


def test_cells16_17_blockers():
    a = np.random.normal(size=(SIZE.n, SIZE.n))
    expected = a.asnumpy() @ a.asnumpy()
    with Benchmark('waitall'):
        b = np.dot(a, a)
        npx.waitall()
    assert mx._janus._engine_stats()["in_flight"] == 0
    with Benchmark('wait_to_read'):
        b = np.dot(a, a)
        b.wait_to_read()
    numpy.testing.assert_allclose(b.asnumpy(), expected, rtol=1e-3, atol=1e-3)
    with Benchmark('numpy conversion'):
        b = np.dot(a, a)
        host = b.asnumpy()
    assert isinstance(host, numpy.ndarray) and host.shape == (SIZE.n, SIZE.n)
    with Benchmark('scalar conversion'):
        b = np.dot(a, a)
        s = b.sum().item()
    assert isinstance(s, float)
    assert math.isclose(s, float(expected.sum()), rel_tol=1e-3, abs_tol=1e-2)


def test_cell18_synchronous_and_asynchronous_agree():
    x = np.ones((1, 2))
    with Benchmark('synchronous'):
        for _ in range(SIZE.loops):
            y = x + 1
            y.wait_to_read()
    assert y.asnumpy().tolist() == [[2.0, 2.0]]
    with Benchmark('asynchronous'):
        for _ in range(SIZE.loops):
            y = x + 1
        y.wait_to_read()
    assert y.asnumpy().tolist() == [[2.0, 2.0]]
    # The loop's issue, without its wait: one engine operation per `x + 1`. The results are
    # kept, so that no array is freed while its operation is pending (that pushes a release).
    npx.waitall()
    before = pushes()
    ys = [x + 1 for _ in range(SIZE.loops)]
    assert pushes() - before == SIZE.loops
    assert ys[-1].asnumpy().tolist() == [[2.0, 2.0]]


def data_iter():  # In [19]
    timer = d2l.Timer()
    num_batches, batch_size = SIZE.num_batches, SIZE.batch_size  # the seed: 150, 1024
    for i in range(num_batches):
        X = np.random.normal(size=(batch_size, 512))
        y = np.ones((batch_size,))
        yield X, y
        if (i + 1) % 50 == 0:
            print(f'batch {i + 1}, time {timer.stop():.4f} sec')


def get_mem():  # In [20]
    res = subprocess.check_output(['ps', 'u', '-p', str(os.getpid())])
    return int(str(res).split()[15]) / 1e3


def test_cells19_23_training_with_and_without_a_barrier():
    net = nn.Sequential()
    net.add(nn.Dense(2048, activation='relu'),
            nn.Dense(512, activation='relu'),
            nn.Dense(1))
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd')
    loss = gluon.loss.L2Loss()

    for X, y in data_iter():  # In [21]
        break
    first = loss(y, net(X))
    first.wait_to_read()
    assert first.shape == (SIZE.batch_size,)

    mem = get_mem()  # In [22]: a barrier per batch
    assert mem > 0
    with Benchmark('time per epoch'):
        for X, y in data_iter():
            with autograd.record():
                l = loss(y, net(X))
            l.backward()
            trainer.step(X.shape[0])
            l.wait_to_read()  # Barrier before a new batch
        npx.waitall()
    print(f'increased memory: {get_mem() - mem:f} MB')
    with_barrier = float(l.mean().item())

    mem = get_mem()  # In [23]: no barrier; the frontend runs ahead of the engine
    max_before = mx._janus._engine_stats()["max_in_flight"]
    with Benchmark('time per epoch'):
        for X, y in data_iter():
            with autograd.record():
                l = loss(y, net(X))
            l.backward()
            trainer.step(X.shape[0])
        npx.waitall()
    # Right after waitall: a blocking read such as item() may return while the operation it
    # waited for is still finishing its own bookkeeping.
    assert mx._janus._engine_stats()["in_flight"] == 0
    print(f'increased memory: {get_mem() - mem:f} MB')
    without_barrier = float(l.mean().item())
    assert mx._janus._engine_stats()["max_in_flight"] >= max_before
    # Training on y = 1 with SGD: the loss keeps falling across both epochs.
    first_loss = float(first.mean().item())
    assert math.isfinite(with_barrier) and math.isfinite(without_barrier)
    assert without_barrier < first_loss


# 12.3 Automatic Parallelism --------------------------------------------------------------------

def run(x):  # In [24]
    return [x.dot(x) for _ in range(10)]


@pytest.mark.parametrize("second", ["try_gpu", "cpu1"])
def test_cells24_28_two_devices_at_once(second):
    x_cpu = np.random.uniform(size=(SIZE.n, SIZE.n))
    # d2l.try_gpu() is cpu(0) without a GPU; cpu1 runs the same cells on a second device.
    device = d2l.try_gpu() if second == "try_gpu" else mx.cpu(1)
    x_gpu = np.random.uniform(size=(SIZE.n, SIZE.n), ctx=device)
    assert x_gpu.ctx == device

    run(x_cpu)  # In [25]: warm-up both devices
    run(x_gpu)
    npx.waitall()
    with Benchmark('CPU time'):
        run(x_cpu)
        npx.waitall()
    with Benchmark('GPU time'):
        run(x_gpu)
        npx.waitall()
    with Benchmark('CPU & GPU'):  # In [26]
        a = run(x_cpu)
        b = run(x_gpu)
        npx.waitall()
    numpy.testing.assert_allclose(a[9].asnumpy(), x_cpu.asnumpy() @ x_cpu.asnumpy(), rtol=1e-3)
    numpy.testing.assert_allclose(b[9].asnumpy(), x_gpu.asnumpy() @ x_gpu.asnumpy(), rtol=1e-3)
    assert b[0].ctx == device

    def copy_to_cpu(x):  # In [27]
        return [y.copyto(npx.cpu()) for y in x]

    with Benchmark('Run on GPU'):
        y = run(x_gpu)
        npx.waitall()
    with Benchmark('Copy to CPU'):
        y_cpu = copy_to_cpu(y)
        npx.waitall()
    assert all(c.ctx == npx.cpu() for c in y_cpu)
    with Benchmark('Run on GPU and copy to CPU'):  # In [28]
        y = run(x_gpu)
        y_cpu = copy_to_cpu(y)
        npx.waitall()
    numpy.testing.assert_allclose(y_cpu[3].asnumpy(), y[3].asnumpy())
