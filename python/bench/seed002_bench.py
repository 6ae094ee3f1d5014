#!/usr/bin/python3
"""Seed 002's experiments from Python, each measured side by side in one run and reported as
ratios (the figures of a loaded machine are noisy; the ratios much less so).

  python_tiny_op        ``y = x + 1`` issued from Python, per operation, against PyTorch eager's
                        ``y = x + 1`` in the same process (issue only, and issue + finish).
  python_sync_async     the seed's 12.2.3: ``x + 1`` with a wait after each versus one wait at
                        the end.
  python_async_issue    the seed's 12.2.1: 10 x (normal 1000x1000, dot): the time to issue them
                        versus the time to finish them (waitall).
  python_hybridize_mlp  the seed's MLP 512-256-128-2 on a 1x512 input, 1000 calls, imperative
                        and hybridized from Python; engine operations pushed per call; and the
                        same hybridized call from C++ (build/bench/hybridize_mlp, when built),
                        giving the Python / C++ ratio (target <= 1.2).
  python_fashion_mlp_epoch  one Fashion-MNIST epoch of the d2l MLP (784-256-10, batch 256, SGD
                        lr 0.1 momentum 0.9) by a Gluon loop in Python, imperative and
                        hybridized, against the same epoch by `janus train`'s loop
                        (build/bench/fashion_mlp_epoch, when built): target <= 1.1. Both loops
                        time the same work (see fashion_epoch).

Each benchmark prints its figures and then one JSON line. Run from the project's root after
``cmake --build build --target janus_python`` (and ``bench_hybridize_mlp bench_fashion_mlp_epoch``
for the C++ side):

  PYTHONPATH=build/python:python /usr/bin/python3 python/bench/seed002_bench.py [--quick]
      [--no-fashion]

--quick shrinks every count (a smoke test; ctest python.bench_smoke runs it so).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import janus as mx
from janus import np, npx
from janus.gluon import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pushed():
    return mx._janus._engine_stats()["pushed"]


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        npx.waitall()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def emit(name, figures):
    print(json.dumps({"bench": name, **figures}), flush=True)


def tiny_op(cfg):
    n = cfg.tiny_ops
    x = np.ones((1, 2))

    def issue():
        for _ in range(n):
            y = x + 1  # noqa: F841

    def issue_and_finish():
        for _ in range(n):
            y = x + 1
        y.wait_to_read()

    issue_and_finish()  # warm-up: the engine's workers started, the operator's kernel made
    issues, totals = [], []
    for _ in range(cfg.rounds):  # interleaved, so that load drifts hit both alike
        issues.append(median_time(issue, 1))
        totals.append(median_time(issue_and_finish, 1))
    issue_s, total_s = statistics.median(issues), statistics.median(totals)
    figures = {"ops": n, "janus_issue_us": issue_s / n * 1e6, "janus_total_us": total_s / n * 1e6}
    try:
        import torch
        torch.set_num_threads(1)
        tx = torch.ones((1, 2))
        tx + 1

        def torch_eager():
            for _ in range(n):
                y = tx + 1  # noqa: F841

        torch_s = median_time(torch_eager, cfg.rounds)
        figures["torch_eager_us"] = torch_s / n * 1e6
        figures["janus_over_torch"] = total_s / torch_s
    except ImportError:
        figures["torch_eager_us"] = None
    print(f"x + 1 from Python: issue {figures['janus_issue_us']:.2f} us/op, issue + finish "
          f"{figures['janus_total_us']:.2f} us/op; PyTorch eager "
          f"{figures.get('torch_eager_us') or float('nan'):.2f} us/op")
    emit("python_tiny_op", figures)


def sync_async(cfg):
    n = cfg.tiny_ops
    x = np.ones((1, 2))

    def synchronous():
        for _ in range(n):
            y = x + 1
            y.wait_to_read()

    def asynchronous():
        for _ in range(n):
            y = x + 1
        y.wait_to_read()

    sync_s, async_s = [], []
    for _ in range(cfg.rounds):  # interleaved, so that load drifts hit both alike
        sync_s.append(median_time(synchronous, 1))
        async_s.append(median_time(asynchronous, 1))
    s, a = statistics.median(sync_s), statistics.median(async_s)
    print(f"synchronous: {s:.4f} sec\nasynchronous: {a:.4f} sec ({n} x `x + 1`)")
    emit("python_sync_async", {"ops": n, "synchronous_s": s, "asynchronous_s": a,
                               "sync_over_async": s / a})


def async_issue(cfg):
    size = cfg.matmul
    issue_s, finish_s = [], []
    np.dot(np.ones((size, size)), np.ones((size, size))).wait_to_read()  # warm-up
    for _ in range(cfg.rounds):
        npx.waitall()
        t = time.perf_counter()
        for _ in range(10):
            a = np.random.normal(size=(size, size))
            b = np.dot(a, a)
        issue_s.append(time.perf_counter() - t)
        npx.waitall()
        finish_s.append(time.perf_counter() - t)
    del b
    i, f = statistics.median(issue_s), statistics.median(finish_s)
    print(f"mxnet.np (issue): {i:.4f} sec\nDone (waitall): {f:.4f} sec (10 x normal + dot, "
          f"{size}x{size})")
    emit("python_async_issue", {"size": size, "issue_s": i, "finish_s": f,
                                "finish_over_issue": f / i})


def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize(mx.init.Xavier())
    return net


def cpp_hybridized_us(quick):
    """The C++ benchmark's hybridized call (us), or None when it is not built."""
    exe = os.path.join(ROOT, "build", "bench", "hybridize_mlp")
    if not os.path.exists(exe) or quick:
        return None
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            return json.loads(line).get("hybridized_us")
    return None


def hybridize_mlp(cfg):
    calls = cfg.calls
    cpp_before = cpp_hybridized_us(cfg.quick)  # the C++ figure before and after the Python
    x = np.random.normal(size=(1, 512))
    net = get_net()
    net(x)

    def run():
        for _ in range(calls):
            net(x)
        npx.waitall()

    imperative, hybridized = [], []
    for _ in range(cfg.rounds):  # interleaved: the same net, hybridized on and off
        net.hybridize(False)
        imperative.append(median_time(run, 1))
        net.hybridize(True, static_alloc=True, static_shape=True)
        hybridized.append(median_time(run, 1))
    before = pushed()
    net(x)
    per_call = pushed() - before
    net.hybridize(False)
    net(x)
    npx.waitall()
    before = pushed()
    net(x)
    imperative_pushes = pushed() - before
    imp_us = statistics.median(imperative) / calls * 1e6
    hyb_us = statistics.median(hybridized) / calls * 1e6
    figures = {"calls": calls, "imperative_us": imp_us, "hybridized_us": hyb_us,
               "speedup": imp_us / hyb_us, "pushes_per_hybridized_call": per_call,
               "pushes_per_imperative_call": imperative_pushes, "traces": net._trace_count}
    print(f"Without hybridization: {imp_us * calls / 1e6:.4f} sec\n"
          f"With hybridization: {hyb_us * calls / 1e6:.4f} sec\n"
          f"per call: {imp_us:.1f} us -> {hyb_us:.1f} us ({imp_us / hyb_us:.2f}x); engine "
          f"operations per call: {imperative_pushes} -> {per_call}")
    cpp_after = cpp_hybridized_us(cfg.quick)  # ones, averaged: the load drifts
    cpp = (cpp_before + cpp_after) / 2 if cpp_before and cpp_after else None
    if cpp:
        figures["cpp_hybridized_us"] = cpp
        figures["python_over_cpp"] = hyb_us / cpp
        print(f"the same hybridized call from C++: {cpp:.1f} us -> Python / C++ "
              f"{hyb_us / cpp:.2f} (target <= 1.2)")
    emit("python_hybridize_mlp", figures)


def fashion_epoch(hybridize, limit):
    """Seconds for one epoch (``limit`` samples at most) and its mean loss. The loop does
    what `janus train`'s epoch (training/train.cc) times: Xavier initialisation, the running
    loss and accuracy updated every batch (C++ metrics, on the engine), and one batch of
    lookahead (the loop waits for the batch before the one it has just issued); the test-set
    evaluation after the epoch is timed on neither side."""
    from janus import autograd, gluon, init
    trans = gluon.data.vision.transforms.ToTensor()
    train = gluon.data.vision.FashionMNIST(train=True).transform_first(trans)
    # No loader worker, as `janus train` (training/train.h: num_workers 0): its batches are
    # gathered by an engine operation beside the step's kernels.
    loader = gluon.data.DataLoader(train, 256, shuffle=True, num_workers=0)
    net = nn.Sequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(10))
    net.initialize(init.Xavier())
    if hybridize:
        net.hybridize()  # not static_shape: the last batch is smaller
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                         "momentum": 0.9})
    accuracy, mean_loss = gluon.metric.Accuracy(), gluon.metric.Loss()
    npx.waitall()
    t = time.perf_counter()
    seen = 0
    previous = None
    for X, y in loader:
        with autograd.record():
            out = net(X)
            l = loss(out, y)
        l.backward()
        trainer.step(X.shape[0])
        mean_loss.update(None, l)
        accuracy.update(y, out)
        if previous is not None:
            previous.wait_to_read()
        previous = l
        seen += X.shape[0]
        if seen >= limit:
            break
    mean_loss.get()  # waits for the last batch
    accuracy.get()
    npx.waitall()
    return time.perf_counter() - t, mean_loss.get()[1]


def cpp_fashion_mlp(quick):
    exe = os.path.join(ROOT, "build", "bench", "fashion_mlp_epoch")
    if not os.path.exists(exe) or quick:
        return None
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("{") and "fashion_mlp_epoch" in line:
            return json.loads(line)
    return None


def fashion_mlp_epoch(cfg):
    limit = 1024 if cfg.quick else 60000
    try:
        imp_s, imp_loss = fashion_epoch(False, limit)
        hyb_s, hyb_loss = fashion_epoch(True, limit)
    except mx.MXNetError as e:  # no dataset-fashion-mnist on this machine
        print(f"python_fashion_mlp_epoch: skipped ({e})")
        return
    figures = {"samples": limit, "python_epoch_s": imp_s, "python_hybridized_epoch_s": hyb_s,
               "python_loss": imp_loss, "python_hybridized_loss": hyb_loss}
    print(f"one epoch from Python: imperative {imp_s:.3f} s (loss {imp_loss:.3f}), hybridized "
          f"{hyb_s:.3f} s (loss {hyb_loss:.3f})")
    cpp = cpp_fashion_mlp(cfg.quick)
    if cpp:
        figures["cpp_epoch_s"] = cpp["epoch_s"]
        figures["cpp_hybridized_epoch_s"] = cpp["hybridized_epoch_s"]
        figures["python_over_cpp"] = imp_s / cpp["epoch_s"]
        figures["python_over_cpp_hybridized"] = hyb_s / cpp["hybridized_epoch_s"]
        print(f"janus train's loop: imperative {cpp['epoch_s']:.3f} s, hybridized "
              f"{cpp['hybridized_epoch_s']:.3f} s -> Python / C++ {imp_s / cpp['epoch_s']:.2f} "
              f"and {hyb_s / cpp['hybridized_epoch_s']:.2f} (target <= 1.1)")
    emit("python_fashion_mlp_epoch", figures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts: a smoke test")
    ap.add_argument("--no-fashion", action="store_true", help="skip the Fashion-MNIST epoch")
    cfg = ap.parse_args()
    cfg.rounds = 2 if cfg.quick else 5
    cfg.tiny_ops = 200 if cfg.quick else 10000
    cfg.matmul = 100 if cfg.quick else 1000
    cfg.calls = 20 if cfg.quick else 1000
    mx.random.seed(0)
    tiny_op(cfg)
    sync_async(cfg)
    async_issue(cfg)
    hybridize_mlp(cfg)
    if not cfg.no_fashion:
        fashion_mlp_epoch(cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
