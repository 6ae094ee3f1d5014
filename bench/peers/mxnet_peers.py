"""Apache MXNet 1.9.1 peer of Janus' side-by-side benchmark table (the seed's own system): the
workloads of peers.py in MXNet Gluon, imperative and hybridized.

Runs in the venv that `scripts/install-deps.sh bench` makes (build/bench-venv: mxnet==1.9.1 from
PyPI, numpy<1.24), prints progress, then one JSON line per workload and a last line about the run:
  {"peer": "mxnet", "workload": "mlp_forward_1000", "imperative_s": 0.17, "hybridized_s": 0.03,
   "static_s": 0.026}
  ...
  {"peer": "mxnet", "threads": 2, "mxnet_version": "1.9.1", "onednn": true, "quick": false}
The fashion workloads add "<mode>_test_acc". A mode that fails, or does not apply (tiny_op_100k
has nothing to hybridize), gets null; the other modes and workloads still run. Progress lines
never start with "{", so the JSON lines are the lines that do.

The modes (Gluon's own, with their default settings; no optimize_for, no subgraph backend):
  imperative  net(x) operator by operator from Python through MXNet's engine;
  hybridized  net.hybridize(): one CachedOp per block call;
  static      net.hybridize(static_alloc=True, static_shape=True): the CachedOp keeps its
              memory plan and shapes between calls (what the seed's 12.1 recommends for speed).
Each hybridized mode is warmed up before timing (the first call traces and builds the graph).

The workloads mirror peers.py's (see there for what each Janus bench does), with MXNet's
equivalent of each piece:
  mlp_forward_1000     Dense(256, relu), Dense(128, relu), Dense(2), Xavier uniform (Gluon's
                       default Xavier: sqrt(6 / (fan_in + fan_out))), zero biases, 1000 calls on
                       one 1 x 512 input from N(0, 1), outside autograd.record, then
                       mx.nd.waitall() (as Janus: issue all, wait once). Median of 5 rounds.
  tiny_op_100k         c = c + b on 1-element float32 arrays 100,000 times, then waitall.
                       Imperative only. Median of 3.
  training_loop        Dense(2048, relu), Dense(512, relu), Dense(1), weights uniform in
                       [-0.07, 0.07] (mx.init.Uniform(0.07), Gluon's default), zero biases; 150
                       batches of x = N(0, 1) 1024 x 512 and y = ones(1024) drawn inside the timed
                       loop; gluon.loss.L2Loss; Trainer("sgd", lr 0.01), step(1024); a barrier
                       (loss.wait_to_read()) after each batch, as Janus' epoch_s. Median of 3.
  fashion_mlp_epoch    fashion_epoch.py's models and settings (mlp batch 256, lr 0.1; lenet batch
  fashion_lenet_epoch  128, lr 0.05; momentum 0.9; Xavier uniform, zero biases) with
                       gluon.loss.SoftmaxCrossEntropyLoss and Trainer("sgd", momentum), step(batch
                       size): MXNet's momentum rule is Janus' (mom = m mom - lr g). The data live
                       in two NDArrays; each batch is gathered with nd.take on a fresh permutation
                       (timed, as Janus' and PyTorch's batch assembly). The frontend may run one
                       batch ahead of the engine (it waits on the previous batch's loss), so the
                       engine's overlap counts but the queue does not grow without bound. The loss
                       block is hybridized with the net. Test accuracy after the epoch (batches of
                       1024, not timed). Warm-up as peers.py: forward and backward without a step
                       on a full batch and on the last batch's size.

--threads N: OMP_NUM_THREADS=N (MXNet's operators, oneDNN included, run on OpenMP) and one CPU
worker thread in MXNet's engine (MXNET_CPU_WORKER_NTHREADS=1, its default), set before mxnet is
imported.

  build/bench-venv/bin/python bench/peers/mxnet_peers.py --threads 2 [--quick] [--workloads A,B]
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback

MODES = ("imperative", "hybridized", "static")

FULL = {
    "mlp_calls": 1000, "mlp_rounds": 5, "mlp_warmup": 20,
    "tiny_ops": 100_000, "tiny_rounds": 3,
    "loop_batches": 150, "loop_epochs": 3, "loop_warmup": 3,
    "fashion_limit": 0,
}
QUICK = {
    "mlp_calls": 100, "mlp_rounds": 3, "mlp_warmup": 5,
    "tiny_ops": 10_000, "tiny_rounds": 3,
    "loop_batches": 5, "loop_epochs": 1, "loop_warmup": 2,
    "fashion_limit": 6000,
}

FASHION = {
    "mlp": {"batch_size": 256, "lr": 0.1, "momentum": 0.9},
    "lenet": {"batch_size": 128, "lr": 0.05, "momentum": 0.9},
}

mx = None  # imported in main(), after the thread settings are in the environment
gluon = nn = autograd = None


def log(msg):
    print(msg, flush=True)


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def hybridize(block, mode):
    if mode == "hybridized":
        block.hybridize()
    elif mode == "static":
        block.hybridize(static_alloc=True, static_shape=True)


# -- mlp_forward_1000 ------------------------------------------------------------------------

def mlp_forward(mode, cfg):
    mx.random.seed(0)
    x = mx.nd.random.normal(0, 1, shape=(1, 512))
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    net.initialize(mx.init.Xavier())
    hybridize(net, mode)
    calls = cfg["mlp_calls"]

    def run(n):
        for _ in range(n):
            net(x)
        mx.nd.waitall()

    run(cfg["mlp_warmup"])
    seconds = median_time(lambda: run(calls), cfg["mlp_rounds"])
    log(f"  {mode}: {seconds:.4f} s for {calls} calls ({seconds / calls * 1e6:.1f} us a call, "
        f"median of {cfg['mlp_rounds']})")
    return {"s": seconds}


# -- tiny_op_100k ----------------------------------------------------------------------------

def tiny_op(mode, cfg):
    if mode != "imperative":
        return None  # one operator: nothing to hybridize
    b = mx.nd.ones((1,))
    ops = cfg["tiny_ops"]

    def run():
        c = mx.nd.zeros((1,))
        for _ in range(ops):
            c = c + b
        mx.nd.waitall()

    run()
    seconds = median_time(run, cfg["tiny_rounds"])
    log(f"  {mode}: {seconds:.4f} s for {ops} additions ({seconds / ops * 1e6:.2f} us each)")
    return {"s": seconds}


# -- training_loop ---------------------------------------------------------------------------

BATCH = 1024


def training_loop(mode, cfg):
    mx.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Dense(2048, activation="relu"), nn.Dense(512, activation="relu"), nn.Dense(1))
    net.initialize(mx.init.Uniform(0.07))
    loss_fn = gluon.loss.L2Loss()
    hybridize(net, mode)
    hybridize(loss_fn, mode)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

    def step(update):
        x = mx.nd.random.normal(0, 1, shape=(BATCH, 512))
        y = mx.nd.ones((BATCH,))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        if update:
            trainer.step(BATCH)
        loss.wait_to_read()  # the barrier before a new batch
        return loss

    for _ in range(cfg["loop_warmup"]):
        step(False)
    batches = cfg["loop_batches"]
    epochs = []
    for _ in range(cfg["loop_epochs"]):
        start = time.perf_counter()
        for i in range(batches):
            loss = step(True)
            if (i + 1) % 50 == 0:
                log(f"  {mode}: batch {i + 1}, time {time.perf_counter() - start:.4f} sec, "
                    f"loss {float(loss.mean().asscalar()):.4f}")
        mx.nd.waitall()
        epochs.append(time.perf_counter() - start)
    seconds = statistics.median(epochs)
    log(f"  {mode}: time per epoch {seconds:.4f} sec ({batches} batches, median of "
        f"{len(epochs)})")
    return {"s": seconds}


# -- fashion_mlp_epoch, fashion_lenet_epoch --------------------------------------------------

_fashion = {}


def fashion_data(limit):
    if limit not in _fashion:
        sys.dont_write_bytecode = True
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fashion_data as data  # NumPy only: shared with the PyTorch peer
        x_train, y_train, x_test, y_test = data.load_splits(data.ROOT, limit)
        _fashion[limit] = (mx.nd.array(x_train), mx.nd.array(y_train, dtype="float32"),
                           mx.nd.array(x_test), y_test)
    return _fashion[limit]


def make_fashion_model(name):
    net = nn.HybridSequential()
    if name == "mlp":
        net.add(nn.Flatten(), nn.Dense(256, activation="relu"), nn.Dense(10))
    else:
        net.add(nn.Conv2D(6, 5, padding=2, activation="relu"), nn.MaxPool2D(2),
                nn.Conv2D(16, 5, activation="relu"), nn.MaxPool2D(2), nn.Flatten(),
                nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    return net


def fashion(model, mode, cfg):
    x_train, y_train, x_test, y_test = fashion_data(cfg["fashion_limit"])
    hp = FASHION[model]
    mx.random.seed(0)  # same weights and batch order in every mode
    net = make_fashion_model(model)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    hybridize(net, mode)
    hybridize(loss_fn, mode)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": hp["lr"], "momentum": hp["momentum"]})
    n, bs = x_train.shape[0], hp["batch_size"]
    for size in (bs, bs, n % bs or bs, n % bs or bs):  # warm-up, no step
        with autograd.record():
            loss = loss_fn(net(x_train[:size]), y_train[:size])
        loss.backward()
    mx.nd.waitall()

    start = time.perf_counter()
    perm = mx.nd.random.shuffle(mx.nd.arange(n))
    loss_sum = mx.nd.zeros((1,))
    correct = mx.nd.zeros((1,))
    previous = None
    for i in range(0, n, bs):
        idx = perm[i:i + bs]
        x, y = mx.nd.take(x_train, idx), mx.nd.take(y_train, idx)
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(y.shape[0])
        loss_sum += loss.sum()
        correct += (out.argmax(axis=1) == y).sum()
        if previous is not None:
            previous.wait_to_read()
        previous = loss
    mx.nd.waitall()
    seconds = time.perf_counter() - start

    hits = 0
    for i in range(0, x_test.shape[0], 1024):
        pred = net(x_test[i:i + 1024]).argmax(axis=1).asnumpy()
        hits += int((pred == y_test[i:i + 1024]).sum())
    acc = hits / x_test.shape[0]
    log(f"  {mode}: {model} epoch on {n} samples, batch {bs}, lr {hp['lr']}, momentum "
        f"{hp['momentum']}: {seconds:.2f} s ({n / seconds:.0f} samples/s), loss "
        f"{float(loss_sum.asscalar()) / n:.4f}, train acc {float(correct.asscalar()) / n:.4f}, "
        f"test acc {acc:.4f} ({x_test.shape[0]} samples)")
    return {"s": seconds, "test_acc": acc}


WORKLOADS = {
    "mlp_forward_1000": mlp_forward,
    "tiny_op_100k": tiny_op,
    "training_loop": training_loop,
    "fashion_mlp_epoch": lambda mode, cfg: fashion("mlp", mode, cfg),
    "fashion_lenet_epoch": lambda mode, cfg: fashion("lenet", mode, cfg),
}


def run_workload(name, cfg):
    line = {"peer": "mxnet", "workload": name}
    results = {}
    for mode in MODES:
        log(f"{name} ({mode})")
        try:
            results[mode] = WORKLOADS[name](mode, cfg)
        except Exception as e:  # one failed mode gives null, the run goes on
            print(f"mxnet_peers.py: {name} in {mode} mode failed: {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)
            traceback.print_exc(file=sys.stderr)
            results[mode] = None
    for mode in MODES:
        r = results[mode]
        line[f"{mode}_s"] = None if r is None else round(r["s"], 6)
        if name.startswith("fashion_"):
            line[f"{mode}_test_acc"] = None if r is None else round(r["test_acc"], 6)
    return line


def main():
    global mx, gluon, nn, autograd
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, required=True, help="OpenMP threads per operator")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    p.add_argument("--quick", action="store_true", help="shrunk workloads, for a smoke test")
    a = p.parse_args()
    names = [w.strip() for w in a.workloads.split(",") if w.strip()]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown or not names:
        what = (f"unknown workloads {', '.join(repr(w) for w in unknown)}" if unknown
                else "no workload given")
        print(f"mxnet_peers.py: {what}; known: {', '.join(WORKLOADS)}", file=sys.stderr)
        sys.exit(2)
    if a.threads < 1:
        print(f"mxnet_peers.py: --threads is {a.threads}, expected at least 1", file=sys.stderr)
        sys.exit(2)

    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["MXNET_CPU_WORKER_NTHREADS"] = "1"
    import mxnet
    from mxnet import autograd as ag, gluon as gl
    mx, gluon, nn, autograd = mxnet, gl, gl.nn, ag
    onednn = mx.runtime.Features().is_enabled("MKLDNN")
    cfg = QUICK if a.quick else FULL
    log(f"mxnet_peers.py: mxnet {mx.__version__}, oneDNN {'on' if onednn else 'off'}, "
        f"{a.threads} OpenMP threads{', quick' if a.quick else ''}")
    log(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus)")
    lines = []
    for name in names:
        start = time.perf_counter()
        lines.append(run_workload(name, cfg))
        log(f"{name}: done in {time.perf_counter() - start:.1f} s")
    log(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for line in lines:
        print(json.dumps(line), flush=True)
    print(json.dumps({"peer": "mxnet", "threads": a.threads, "mxnet_version": mx.__version__,
                      "onednn": onednn, "quick": a.quick}), flush=True)


if __name__ == "__main__":
    main()
