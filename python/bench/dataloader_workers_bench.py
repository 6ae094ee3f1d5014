#!/usr/bin/python3
"""python_dataloader_workers: one epoch of gluon.data.DataLoader over a dataset whose transform
is written in Python (GIL-bound: a loop of float arithmetic per sample, then a Janus ToTensor),
gathered by the loop's thread (num_workers=0), by 2 worker threads (thread_pool=True) and by 2
worker processes (the default), measured side by side in one run, interleaved, best of
``--repeats``. Reported as ratios to num_workers=0: threads should stay near 1 (the GIL lets one
transform run at a time), processes should approach 1 / min(2, cores). The first epoch of a
process pool includes its fork; each timed epoch here uses a fresh loader, so the fork is in
every process figure.

  PYTHONPATH=build/python:python /usr/bin/python3 python/bench/dataloader_workers_bench.py
      [--samples N] [--repeats R]

Prints the figures and then one JSON line."""
import argparse
import json
import os
import time

import numpy as onp

from janus import gluon
from janus.gluon.data.vision import transforms as T


class PythonWork:
    """Sample i: a uint8 image [28, 28, 1] after ``work`` rounds of pure-Python arithmetic."""

    def __init__(self, n, work):
        self.n, self.work = n, work

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        acc = 0.0
        for k in range(self.work):
            acc += (k * 0.5 + i) % 7.0
        img = onp.full((28, 28, 1), int(acc) % 256, onp.uint8)
        return img, i


def epoch_seconds(ds, **kw):
    loader = gluon.data.DataLoader(ds, batch_size=32, **kw)
    start = time.perf_counter()
    for x, _ in loader:
        x.wait_to_read()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=512)
    ap.add_argument("--work", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    ds = gluon.data.SimpleDataset(PythonWork(a.samples, a.work)).transform_first(T.ToTensor())
    runs = {"serial": {}, "threads": {"num_workers": 2, "thread_pool": True},
            "processes": {"num_workers": 2}}
    best = {k: float("inf") for k in runs}
    for _ in range(a.repeats):
        for name, kw in runs.items():
            best[name] = min(best[name], epoch_seconds(ds, **kw))
    for name in runs:
        print(f"{name:10s} {best[name] * 1e3:9.1f} ms per epoch of {a.samples} samples")
    print(json.dumps({"bench": "python_dataloader_workers", "cores": os.cpu_count(),
                      "serial_s": round(best["serial"], 4),
                      "threads_over_serial": round(best["threads"] / best["serial"], 3),
                      "processes_over_serial": round(best["processes"] / best["serial"], 3)}))


if __name__ == "__main__":
    main()
