"""gluon.data.DataLoader over a Python dataset with num_workers: batches gathered by worker
processes (MXNet's default) or threads (thread_pool=True) ahead of the loop, handed out in
order; a failing sample is named; Janus operators run in forked workers on their own engine;
Ctrl-C, a timeout, a break and exit end the workers."""
import glob
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as onp
import pytest

import janus as mx
from janus import gluon


class Squares:
    """Sample i: (float32 [2] = (i, i * i), int i); records the threads that read it."""

    def __init__(self, n, fail_at=None):
        self.n, self.fail_at, self.threads, self.read = n, fail_at, set(), []
        self.lock = threading.Lock()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError("bad pixel")
        with self.lock:
            self.threads.add(threading.current_thread().name)
            self.read.append(i)
        return onp.array([i, i * i], onp.float32), i


@pytest.mark.parametrize("workers,thread_pool", [(0, False), (1, False), (3, False), (2, True)])
def test_batches_come_in_order_and_the_same_as_without_workers(workers, thread_pool):
    ds = Squares(50)
    loader = gluon.data.DataLoader(ds, batch_size=8, num_workers=workers, thread_pool=thread_pool)
    got = [(x.asnumpy(), y.asnumpy()) for x, y in loader]
    assert len(got) == len(loader) == 7
    labels = onp.concatenate([y for _, y in got])
    onp.testing.assert_array_equal(labels, onp.arange(50))
    onp.testing.assert_array_equal(onp.concatenate([x for x, _ in got])[:, 1], labels ** 2)
    if workers > 0 and thread_pool:
        assert all(name.startswith("janus-loader") for name in ds.threads)
    elif workers > 0:  # read by the worker processes, in their copies of the dataset
        assert ds.read == []
    # A shuffled epoch with workers is the order that the same seed gives without them.
    mx.random.seed(11)
    plain = [y.asnumpy() for _, y in gluon.data.DataLoader(ds, 8, shuffle=True)]
    mx.random.seed(11)
    pooled = [y.asnumpy() for _, y in gluon.data.DataLoader(ds, 8, shuffle=True,
                                                            num_workers=workers)]
    assert all((a == b).all() for a, b in zip(plain, pooled))


def test_workers_gather_ahead_of_the_loop():
    ds = Squares(64)
    ahead = threading.Event()

    class Watch(Squares):
        def __getitem__(self, i):
            if i == 40:  # batch 5: only a loader working ahead reads it while batch 0 is held
                ahead.set()
            return super().__getitem__(i)

    loader = gluon.data.DataLoader(Watch(64), batch_size=8, num_workers=2, prefetch=6,
                                   thread_pool=True)
    it = iter(loader)
    next(it)
    assert ahead.wait(timeout=120), "the workers did not read batch 5 while the loop held batch 0"
    assert len(list(it)) == 7
    del ds


@pytest.mark.parametrize("workers,thread_pool", [(0, False), (2, False), (2, True)])
def test_a_failing_sample_is_named_in_the_loop(workers, thread_pool):
    loader = gluon.data.DataLoader(Squares(40, fail_at=21), batch_size=8, num_workers=workers,
                                   thread_pool=thread_pool)
    seen = []
    with pytest.raises(ValueError, match=r"DataLoader: reading sample 21 failed: ValueError: "
                                         r"bad pixel"):
        for _, y in loader:
            seen.append(y.asnumpy())
    assert len(seen) == 2  # batches 0 and 1 came out before the failing batch 2
    # The loader is usable again afterwards.
    assert len(list(gluon.data.DataLoader(Squares(16), 8, num_workers=workers,
                                          thread_pool=thread_pool))) == 2


def test_bad_worker_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="num_workers is -1, expected an int >= 0"):
        gluon.data.DataLoader(Squares(4), 2, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch is -2, expected an int >= 0"):
        gluon.data.DataLoader(Squares(4), 2, num_workers=1, prefetch=-2)
    with pytest.raises(ValueError, match="timeout is 0, expected seconds > 0"):
        gluon.data.DataLoader(Squares(4), 2, num_workers=1, timeout=0)


_CHILD = textwrap.dedent("""
    import numpy as onp
    from janus import gluon

    class Slow:
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            return onp.full((64,), i, onp.float32), i

    loader = gluon.data.DataLoader(Slow(), batch_size=10, num_workers=4)
    it = iter(loader)
    for k, (x, y) in enumerate(it):
        if k == 3:
            break  # the epoch is left with batches in work; `it` stays alive until exit
    print("left", int(y.asnumpy()[0]))
""")


def test_an_abandoned_epoch_ends_cleanly_at_exit():
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["left", "30"]


# --- Worker processes ---------------------------------------------------------------------------

class Images:
    """Sample i: a uint8 image [4, 5, 3] and the id of the process that read it."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        img = onp.arange(60, dtype=onp.uint8).reshape(4, 5, 3) + onp.uint8(i)
        return img, os.getpid()


def test_worker_processes_run_janus_operators_on_their_own_engine():
    from janus.gluon.data.vision import transforms as T
    t = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2))])
    ds = gluon.data.SimpleDataset(Images()).transform_first(t)  # Janus operators per sample
    want = [x.asnumpy() for x, _ in gluon.data.DataLoader(ds, batch_size=5)]
    for _ in range(2):  # two epochs of one pool
        loader = gluon.data.DataLoader(ds, batch_size=5, num_workers=2)
        got = list(loader)
        assert len(got) == 3
        for (x, pids), w in zip(got, want):
            onp.testing.assert_allclose(x.asnumpy(), w, rtol=1e-6)
            assert os.getpid() not in set(pids.asnumpy().tolist())
    assert (mx.np.ones((2,)) + 1).asnumpy().tolist() == [2.0, 2.0]  # the parent's engine works


class Unpicklable(Exception):
    def __init__(self, code, detail):
        super().__init__(f"code {code}: {detail}")


class RaisesUnpicklable(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise Unpicklable(7, "broken")
        return super().__getitem__(i)


def test_an_error_the_parent_cannot_rebuild_still_names_the_sample():
    loader = gluon.data.DataLoader(RaisesUnpicklable(8), batch_size=4, num_workers=2)
    with pytest.raises(RuntimeError, match=r"DataLoader: reading sample 5 failed: Unpicklable: "
                                           r"code 7: broken"):
        list(loader)


class Sleepy(Squares):
    def __getitem__(self, i):
        time.sleep(600)


def test_a_worker_past_the_timeout_is_an_error_and_is_ended():
    loader = gluon.data.DataLoader(Sleepy(4), batch_size=2, num_workers=1, timeout=0.5)
    with pytest.raises(RuntimeError, match=r"DataLoader: batch 0 took a worker process more than "
                                           r"0.5 s"):
        next(iter(loader))
    assert loader._loader._pool is None  # terminated, not left sleeping


_CTRL_C = textwrap.dedent("""
    import os, sys, time
    from janus import gluon

    class Stuck:
        def __len__(self):
            return 100
        def __getitem__(self, i):
            open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
            time.sleep(600)

    try:
        for batch in gluon.data.DataLoader(Stuck(), batch_size=1, num_workers=2):
            pass
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
""")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waits only to be reaped
        return f.read().split(")")[-1].split()[0] != "Z"


def test_ctrl_c_interrupts_the_loop_and_ends_the_workers(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _CTRL_C, str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while len(glob.glob(str(tmp_path / "*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(os.path.basename(p)) for p in glob.glob(str(tmp_path / "*"))]
        assert len(workers) == 2, "the worker processes did not start"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 3, out + err
    assert out.strip() == "interrupted"
    deadline = time.monotonic() + 60
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in workers)
