"""gluon.data.DataLoader over a Python dataset with num_workers: batches gathered by worker
threads ahead of the loop, handed out in order; a failing sample is named; the workers end."""
import os
import subprocess
import sys
import textwrap
import threading

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
    if workers > 0:
        assert all(name.startswith("janus-loader") for name in ds.threads)
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

    loader = gluon.data.DataLoader(Watch(64), batch_size=8, num_workers=2, prefetch=6)
    it = iter(loader)
    next(it)
    assert ahead.wait(timeout=120), "the workers did not read batch 5 while the loop held batch 0"
    assert len(list(it)) == 7
    del ds


@pytest.mark.parametrize("workers", [0, 2])
def test_a_failing_sample_is_named_in_the_loop(workers):
    loader = gluon.data.DataLoader(Squares(40, fail_at=21), batch_size=8, num_workers=workers)
    seen = []
    with pytest.raises(ValueError, match=r"DataLoader: reading sample 21 failed: ValueError: "
                                         r"bad pixel"):
        for _, y in loader:
            seen.append(y.asnumpy())
    assert len(seen) == 2  # batches 0 and 1 came out before the failing batch 2
    # The loader is usable again afterwards.
    assert len(list(gluon.data.DataLoader(Squares(16), 8, num_workers=workers))) == 2


def test_bad_worker_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="num_workers is -1, expected an int >= 0"):
        gluon.data.DataLoader(Squares(4), 2, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch is -2, expected an int >= 0"):
        gluon.data.DataLoader(Squares(4), 2, num_workers=1, prefetch=-2)


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
