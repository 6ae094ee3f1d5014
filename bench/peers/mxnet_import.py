"""MXNet 1.9.1 peer of bench/mxnet_import.cc: the same exported files run by MXNet itself.

  python bench/peers/mxnet_import.py PREFIX [PREFIX ...]

Loads each PREFIX (PREFIX-symbol.json + PREFIX-0000.params + PREFIX-input.npy, an MXNet export
from tests/fixtures/mxnet/) with gluon.SymbolBlock.imports and hybridizes it (static_alloc,
static_shape), then prints {"peer": "mxnet", "ready": true, "mxnet_version": "1.9.1"} and
serves timing requests, one per line on stdin, until stdin closes:

  MODEL BATCH CALLS     (MODEL: a PREFIX's base name, e.g. "mlp 64 100")

For each it times CALLS calls of MODEL on BATCH copies of the input along axis 0, each call
waited for (y.wait_to_read()), as Janus' side waits for each Predictor call, and answers
  {"peer": "mxnet", "model": "mlp", "batch": 64, "per_call_s": 1.2e-04}
The first request of a (model, batch) first runs two untimed calls (compilation, allocation).
The bench alternates these rounds with its own, so that both sides see the same machine.
Lines that are not JSON never start with "{". Run it with a Python that has mxnet==1.9.1 and
numpy<1.24 (the bench venv, build/bench-venv, or tests/fixtures/mxnet/make_fixtures.sh's).
"""
import json
import os
import sys
import time

import mxnet as mx
import numpy as np
from mxnet import gluon


def answer(obj):
    print(json.dumps(obj), flush=True)


def main():
    nets, inputs, batches = {}, {}, {}
    for prefix in sys.argv[1:]:
        model = os.path.basename(prefix)
        net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        net.hybridize(static_alloc=True, static_shape=True)
        nets[model] = net
        inputs[model] = np.load(prefix + "-input.npy")
    answer({"peer": "mxnet", "ready": True, "mxnet_version": mx.__version__})
    for line in sys.stdin:
        model, batch, calls = line.split()
        batch, calls = int(batch), int(calls)
        net = nets[model]
        x = batches.get((model, batch))
        if x is None:
            x = mx.nd.array(np.repeat(inputs[model], batch, axis=0))
            batches[(model, batch)] = x
            for _ in range(2):
                net(x).wait_to_read()
        start = time.perf_counter()
        for _ in range(calls):
            net(x).wait_to_read()
        answer({"peer": "mxnet", "model": model, "batch": batch,
                "per_call_s": (time.perf_counter() - start) / calls})


if __name__ == "__main__":
    main()
