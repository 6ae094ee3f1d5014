"""MXNet 1.9.1 peer of bench/mxnet_import.cc: the same exported files run by MXNet itself.

  python bench/peers/mxnet_import.py CALLS ROUNDS PREFIX [PREFIX ...]

For each PREFIX (PREFIX-symbol.json + PREFIX-0000.params + PREFIX-input.npy, an MXNet export
from tests/fixtures/mxnet/) loads the model with gluon.SymbolBlock.imports, hybridizes it
(static_alloc, static_shape), and times CALLS calls at batch 1 and at batch 64 (64 copies of the
input), each call waited for (y.wait_to_read()), as Janus' side waits for each Predictor call.
Two calls of each batch size are run first, untimed (compilation, allocation). Prints one JSON
line per model and batch, the median over ROUNDS rounds of the seconds per call:
  {"peer": "mxnet", "model": "mlp", "batch": 1, "per_call_s": 1.2e-05}
and a last line {"peer": "mxnet", "mxnet_version": "1.9.1", "threads": N}. Lines that are not
JSON never start with "{". Run it with a Python that has mxnet==1.9.1 and numpy<1.24 (the bench
venv, build/bench-venv, or tests/fixtures/mxnet/make_fixtures.sh's).
"""
import json
import os
import statistics
import sys
import time

import mxnet as mx
import numpy as np
from mxnet import gluon


def main():
    calls, rounds = int(sys.argv[1]), int(sys.argv[2])
    for prefix in sys.argv[3:]:
        model = os.path.basename(prefix)
        net = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        net.hybridize(static_alloc=True, static_shape=True)
        x1 = np.load(prefix + "-input.npy")
        for batch in (1, 64):
            x = mx.nd.array(np.repeat(x1, batch, axis=0))
            for _ in range(2):
                net(x).wait_to_read()
            per_call = []
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(calls):
                    net(x).wait_to_read()
                per_call.append((time.perf_counter() - start) / calls)
            print(json.dumps({"peer": "mxnet", "model": model, "batch": batch,
                              "per_call_s": statistics.median(per_call)}), flush=True)
    print(json.dumps({"peer": "mxnet", "mxnet_version": mx.__version__,
                      "threads": int(os.environ.get("OMP_NUM_THREADS", "0")) or None}),
          flush=True)


if __name__ == "__main__":
    main()
