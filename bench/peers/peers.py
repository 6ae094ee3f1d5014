#!/usr/bin/python3
"""PyTorch peer of Janus' side-by-side benchmark table: each workload in eager mode and in TorchScript.

Runs the workloads below with PyTorch, each in two modes, and prints progress, then one JSON line
per workload and a last line about the run:
  {"peer": "pytorch", "workload": "mlp_forward_1000", "eager_s": 0.123, "torchscript_s": 0.101}
  ...
  {"peer": "pytorch", "threads": 2, "torch_version": "1.13.0a0", "quick": false}
The fashion workloads add "eager_test_acc" and "torchscript_test_acc". A mode that fails gets
null (and a message on stderr); the other modes and workloads still run. Progress lines never
start with "{", so the JSON lines are the lines that do.

The modes:
  eager        plain PyTorch, operator by operator from Python;
  torchscript  the model (or the loop, see tiny_op_100k) compiled with torch.jit.script and run
               by the TorchScript executor with its default settings (profiling executor, the
               default fusers), warmed up before timing so that the profiling runs and the
               optimisation are not counted.

The workloads, each mirroring a Janus bench (same sizes, counts, loss, optimizer, learning rate,
initialisation where it matters):
  mlp_forward_1000     bench/hybridize_mlp.cc: an MLP 512 -> 256 -> 128 -> 2 (ReLU between the
                       layers, none after the last), Xavier-uniform weights, zero biases, called
                       1000 times on one 1 x 512 float32 input drawn from N(0, 1), under
                       torch.no_grad() (Janus does not record either). Seconds for the 1000 calls,
                       median of 5 rounds (Janus: "Without hybridization" / "With hybridization").
  tiny_op_100k         bench/engine_push.cc (ii) and its op-API chain: 100,000 additions of two
                       1-element float32 tensors, issued one by one, each allocating its output and
                       dropping the previous one (c = c + b, see tiny_op below for why a chain).
                       Total seconds, median of 3.
  matmul_1000_x10      bench/sync_vs_async.cc: 10 products of 1000 x 1000 float32 matrices, a drawn
                       from N(0, 1) once, untimed (Janus' 10 x (random_normal, dot) also times the
                       drawing). The products form a chain b = b @ a (see matmul below for why).
                       Seconds for the 10, median of 3 after a warm-up.
  training_loop        bench/training_loop.cc (d2l.ai 12.2.4): an MLP 512 -> 2048 -> 512 -> 1
                       (ReLU, ReLU, linear), weights uniform in [-0.07, 0.07] (Janus' default
                       initializer, Gluon's), zero biases; 150 batches, each a fresh
                       x = N(0, 1) of 1024 x 512 and y = ones(1024) (generated inside the timed
                       loop, as in Janus); L2 loss 0.5 (pred - y)^2 per sample; plain SGD, lr 0.01,
                       no momentum, no weight decay. Janus backpropagates the per-sample losses
                       (head gradient ones) and the trainer rescales by 1 / 1024; PyTorch
                       backpropagates their mean: the same gradient. Seconds per epoch: Janus'
                       "epoch_s" is the epoch with a barrier after each batch; PyTorch on the CPU
                       finishes each operator before returning, so every batch ends with one.
                       Warm-up: a few untimed batches, forward and backward without a step (Janus
                       runs one forward batch). Median of 3 epochs (Janus times one; an epoch takes
                       about 15 s on two cores, so this is most of the full run's 2 minutes).
  fashion_mlp_epoch    bench/fashion_accuracy.cc / training/train.cc through fashion_epoch.py (same
  fashion_lenet_epoch  data, models, initialisation, loss, optimizer and timed loop; see there):
                       one training epoch on Fashion-MNIST from a fresh model with Janus' settings
                       for bench/fashion_accuracy.cc (what bench/fashion_epoch_vs_torch.sh
                       compares): mlp batch 256, lr 0.1, momentum 0.9; lenet batch 128, lr 0.05,
                       momentum 0.9. Seconds for the epoch and the test accuracy after it (the
                       evaluation is not timed). Both modes start from the same seed, so the same
                       weights and the same batch order. Warm-up: forward and backward without a
                       step on a full batch and on the last, smaller batch's size (Janus runs one
                       forward call before training for its deferred initialisation).

--quick shrinks every workload (fewer calls, rounds and batches; fashion epochs on the first 6000
training and 1000 test samples) for a smoke test; its figures are those of the shrunk workloads,
not comparable with the full ones or Janus'.

--threads N sets torch.set_num_threads(N) (which should be Janus' kernel threads) and one
inter-op thread.

Run with Debian's interpreter (/usr/bin/python3), where python3-torch lives:
  /usr/bin/python3 bench/peers/peers.py --threads 2
  /usr/bin/python3 bench/peers/peers.py --threads 2 --workloads tiny_op_100k,matmul_1000_x10 --quick
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback

import torch
from torch import nn

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree by the import below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_epoch  # noqa: E402  (the Fashion-MNIST peer: data, models, training loop)

MODES = ("eager", "torchscript")

# Sizes per workload, full and --quick.
FULL = {
    "mlp_calls": 1000, "mlp_rounds": 5, "mlp_warmup": 20,
    "tiny_ops": 100_000, "tiny_rounds": 3,
    "matmul_n": 1000, "matmul_products": 10, "matmul_rounds": 3,
    "loop_batches": 150, "loop_epochs": 3, "loop_warmup": 3,
    "fashion_limit": 0,
}
QUICK = {
    "mlp_calls": 100, "mlp_rounds": 3, "mlp_warmup": 5,
    "tiny_ops": 10_000, "tiny_rounds": 3,
    "matmul_n": 1000, "matmul_products": 2, "matmul_rounds": 3,
    "loop_batches": 5, "loop_epochs": 1, "loop_warmup": 2,
    "fashion_limit": 6000,
}

# Janus' settings for the two Fashion-MNIST models (bench/fashion_accuracy.cc).
FASHION = {
    "mlp": {"batch_size": 256, "lr": 0.1, "momentum": 0.9},
    "lenet": {"batch_size": 128, "lr": 0.05, "momentum": 0.9},
}


def log(msg):
    print(msg, flush=True)


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# -- mlp_forward_1000 ------------------------------------------------------------------------

def make_hybridize_mlp():
    """bench/hybridize_mlp.cc's net: Dense(256, relu), Dense(128, relu), Dense(2), Xavier."""
    net = nn.Sequential(nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                        nn.Linear(128, 2))
    for m in net.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return net


def mlp_forward(mode, cfg):
    torch.manual_seed(0)
    x = torch.randn(1, 512)
    net = make_hybridize_mlp().eval()
    if mode == "torchscript":
        net = torch.jit.script(net)
    calls = cfg["mlp_calls"]

    def run(n):
        for _ in range(n):
            net(x)

    with torch.no_grad():
        run(cfg["mlp_warmup"])
        seconds = median_time(lambda: run(calls), cfg["mlp_rounds"])
    log(f"  {mode}: {seconds:.4f} s for {calls} calls ({seconds / calls * 1e6:.1f} us a call, "
        f"median of {cfg['mlp_rounds']})")
    return {"s": seconds}


# -- tiny_op_100k ----------------------------------------------------------------------------

# TorchScript: the loop itself is scripted, not a function doing the single add that Python would
# call 100,000 times. Janus issues its tiny operators from a compiled frontend (C++); the honest
# TorchScript counterpart is the TorchScript interpreter issuing the 100,000 aten::add calls one
# by one (each through the dispatcher, each allocating its output; nothing to fuse across
# iterations). Calling a scripted one-add function from Python would time Python's entry into
# the TorchScript executor on top of the eager path, which is not what TorchScript is for.
# The adds form a chain, c = c + b, rather than Janus' c = add(a, b) repeated: TorchScript unrolls
# the loop (by 8) and drops the repeated c = a + b whose results are overwritten unread as dead
# code (100 iterations ran 16 adds). PyTorch runs each operator to completion before the next
# call, so a chain of adds costs the same as independent ones; both modes use the chain. The
# number of adds actually run is checked by profiling a short call (count_ops). Scripted when the
# mode runs, so that a failure only nulls that mode.
def tiny_add_loop(a: torch.Tensor, b: torch.Tensor, n: int) -> torch.Tensor:
    c = a
    for _ in range(n):
        c = c + b
    return c


def count_ops(op, fn, *args):
    """How many times fn(*args) runs the operator `op` (e.g. "aten::add"), by the profiler."""
    with torch.autograd.profiler.profile() as prof:
        fn(*args)
    return sum(1 for e in prof.function_events if e.name == op)


def tiny_op(mode, cfg):
    a = torch.ones(1)
    b = torch.ones(1)
    ops = cfg["tiny_ops"]
    if mode == "eager":
        def run():
            c = a
            for _ in range(ops):
                c = c + b
            return c
    else:
        loop = torch.jit.script(tiny_add_loop)
        for _ in range(3):  # profiling run and optimisation
            loop(a, b, 10)
        adds = count_ops("aten::add", loop, a, b, 100)
        if adds != 100:
            raise RuntimeError(f"the scripted loop ran {adds} adds for 100 iterations")

        def run():
            return loop(a, b, ops)
    run()  # warm-up
    seconds = median_time(run, cfg["tiny_rounds"])
    log(f"  {mode}: {seconds:.4f} s for {ops} adds ({seconds / ops * 1e6:.2f} us an add, "
        f"median of {cfg['tiny_rounds']})")
    return {"s": seconds}


# -- matmul_1000_x10 -------------------------------------------------------------------------

# TorchScript: the 10 products in a scripted loop, as for tiny_op_100k (the interpreter's cost is
# negligible next to a 2 GFLOP product either way). As there, a chain b = b @ a, not b = a @ a
# repeated: TorchScript unrolls the loop and drops the overwritten products as dead code (it ran
# 3 of 10, an impossible 394 GFLOP/s on two cores). b is a^(k+1) after k products, entries of
# order 1000^(k/2) for N(0, 1) entries: 1e15 after 10, far from float32's overflow, and sgemm's
# speed does not depend on the values (no denormals). Both modes run the chain.
def matmul_loop(a: torch.Tensor, n: int) -> torch.Tensor:
    b = a
    for _ in range(n):
        b = torch.mm(b, a)
    return b


def matmul(mode, cfg):
    torch.manual_seed(0)
    size, products = cfg["matmul_n"], cfg["matmul_products"]
    a = torch.randn(size, size)
    if mode == "eager":
        def run():
            b = a
            for _ in range(products):
                b = torch.mm(b, a)
            return b
    else:
        loop = torch.jit.script(matmul_loop)
        for _ in range(2):  # profiling run and optimisation
            loop(a, 2)
        # At least 8 iterations, or the unrolled loop body (8 copies) would not run at all.
        check = max(products, 8)
        products_run = count_ops("aten::mm", loop, a, check)
        if products_run != check:
            raise RuntimeError(f"the scripted loop ran {products_run} products for {check} "
                               "iterations")

        def run():
            return loop(a, products)
    run()  # warm-up (and, for TorchScript, the profiling run)
    run()
    seconds = median_time(run, cfg["matmul_rounds"])
    gflops = 2.0 * size ** 3 * products / seconds / 1e9
    log(f"  {mode}: {seconds:.4f} s for {products} products of {size}x{size} "
        f"({gflops:.1f} GFLOP/s, median of {cfg['matmul_rounds']})")
    return {"s": seconds}


# -- training_loop ---------------------------------------------------------------------------

BATCH = 1024


def make_training_loop_mlp():
    """bench/training_loop.cc's net: Dense(2048, relu), Dense(512, relu), Dense(1), Janus'
    default initializer (uniform in [-0.07, 0.07]) for the weights, zero biases."""
    net = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512), nn.ReLU(),
                        nn.Linear(512, 1))
    for m in net.modules():
        if isinstance(m, nn.Linear):
            nn.init.uniform_(m.weight, -0.07, 0.07)
            nn.init.zeros_(m.bias)
    return net


def l2_loss(pred, label):
    """Janus' L2Loss: 0.5 (pred - label)^2, the label reshaped to pred's shape, averaged over
    every axis but the batch axis: one loss per sample."""
    return (0.5 * (pred - label.reshape(pred.shape)) ** 2).mean(dim=1)


def training_step(net, opt, step):
    x = torch.randn(BATCH, 512)
    y = torch.ones(BATCH)
    loss = l2_loss(net(x), y)
    opt.zero_grad(set_to_none=True)  # Janus' backward writes (not adds to) the gradients
    loss.mean().backward()           # = sum of the per-sample losses, rescaled by 1 / batch
    if step:
        opt.step()
    return loss


def training_loop(mode, cfg):
    torch.manual_seed(0)
    net = make_training_loop_mlp()
    if mode == "torchscript":
        net = torch.jit.script(net)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(cfg["loop_warmup"]):
        training_step(net, opt, step=False)
    batches = cfg["loop_batches"]
    epochs = []
    for _ in range(cfg["loop_epochs"]):
        start = time.perf_counter()
        for i in range(batches):
            loss = training_step(net, opt, step=True)
            if (i + 1) % 50 == 0:
                log(f"  {mode}: batch {i + 1}, time {time.perf_counter() - start:.4f} sec, "
                    f"loss {float(loss.mean()):.4f}")
        epochs.append(time.perf_counter() - start)
    seconds = statistics.median(epochs)
    # The FLOPs as bench/training_loop.cc counts them: forward 2mnk per layer, backward twice
    # that but no input gradient for the first layer.
    fwd = 2.0 * BATCH * (512 * 2048 + 2048 * 512 + 512)
    bwd = fwd + 2.0 * BATCH * (2048 * 512 + 512)
    log(f"  {mode}: time per epoch {seconds:.4f} sec ({batches} batches, "
        f"{(fwd + bwd) * batches / seconds / 1e9:.1f} GFLOP/s, median of {len(epochs)})")
    return {"s": seconds}


# -- fashion_mlp_epoch, fashion_lenet_epoch --------------------------------------------------

_fashion_data = {}


def fashion_data(limit):
    if limit not in _fashion_data:
        _fashion_data[limit] = fashion_epoch.load_splits(fashion_epoch.ROOT, limit)
    return _fashion_data[limit]


def fashion(model, mode, cfg):
    x_train, y_train, x_test, y_test = fashion_data(cfg["fashion_limit"])
    hp = FASHION[model]
    torch.manual_seed(0)  # same weights and, below, the same batch order in both modes
    net = fashion_epoch.make_model(model)
    if mode == "torchscript":
        net = torch.jit.script(net)
    opt = fashion_epoch.make_optimizer(net, hp["lr"], hp["momentum"])
    loss_fn = nn.CrossEntropyLoss()
    # Warm-up without a step (the weights stay as initialised): a full batch twice and the
    # last batch's size twice (TorchScript profiles, then optimises, for each shape).
    n, bs = x_train.shape[0], hp["batch_size"]
    net.train()
    for size in (bs, bs, n % bs or bs, n % bs or bs):
        loss_fn(net(x_train[:size]), y_train[:size]).backward()
        opt.zero_grad(set_to_none=True)
    seconds, loss, train_acc = fashion_epoch.train_epoch(net, opt, loss_fn, x_train, y_train, bs)
    acc = fashion_epoch.evaluate(net, x_test, y_test)
    log(f"  {mode}: {model} epoch on {n} samples, batch {bs}, lr {hp['lr']}, momentum "
        f"{hp['momentum']}: {seconds:.2f} s ({n / seconds:.0f} samples/s), loss {loss:.4f}, "
        f"train acc {train_acc:.4f}, test acc {acc:.4f} ({x_test.shape[0]} samples)")
    return {"s": seconds, "test_acc": acc}


WORKLOADS = {
    "mlp_forward_1000": mlp_forward,
    "tiny_op_100k": tiny_op,
    "matmul_1000_x10": matmul,
    "training_loop": training_loop,
    "fashion_mlp_epoch": lambda mode, cfg: fashion("mlp", mode, cfg),
    "fashion_lenet_epoch": lambda mode, cfg: fashion("lenet", mode, cfg),
}


def run_workload(name, cfg):
    line = {"peer": "pytorch", "workload": name}
    results = {}
    for mode in MODES:
        log(f"{name} ({mode})")
        try:
            results[mode] = WORKLOADS[name](mode, cfg)
        except Exception as e:  # one failed mode gives null, the run goes on
            print(f"peers.py: {name} in {mode} mode failed: {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)
            traceback.print_exc(file=sys.stderr)
            results[mode] = None
    for mode in MODES:
        r = results[mode]
        line[f"{mode}_s"] = None if r is None else round(r["s"], 6)
    if name.startswith("fashion_"):
        for mode in MODES:
            r = results[mode]
            line[f"{mode}_test_acc"] = None if r is None else round(r["test_acc"], 6)
    return line


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, required=True, help="intra-op threads")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    p.add_argument("--quick", action="store_true", help="shrunk workloads, for a smoke test")
    a = p.parse_args()

    names = [w.strip() for w in a.workloads.split(",") if w.strip()]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown or not names:
        what = (f"unknown workload{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(w) for w in unknown)}" if unknown else "no workload given")
        print(f"peers.py: {what}; known: {', '.join(WORKLOADS)}", file=sys.stderr)
        sys.exit(2)
    if a.threads < 1:
        print(f"peers.py: --threads is {a.threads}, expected at least 1", file=sys.stderr)
        sys.exit(2)

    # Before any parallel work: set_num_interop_threads fails once the pool has started.
    torch.set_num_interop_threads(1)
    torch.set_num_threads(a.threads)
    cfg = QUICK if a.quick else FULL
    log(f"peers.py: torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
        f"{torch.get_num_interop_threads()} inter-op thread, BLAS "
        f"{fashion_epoch.blas_library()}{', quick' if a.quick else ''}")
    # Other work on the machine skews every figure (2 busy processes on 2 cores made an epoch
    # 20x slower in testing): the load average before and after tells whether the run was alone.
    log(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus)")
    lines = []
    for name in names:
        start = time.perf_counter()
        lines.append(run_workload(name, cfg))
        log(f"{name}: done in {time.perf_counter() - start:.1f} s")
    log(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for line in lines:
        print(json.dumps(line), flush=True)
    print(json.dumps({"peer": "pytorch", "threads": torch.get_num_threads(),
                      "torch_version": torch.__version__, "quick": a.quick}), flush=True)


if __name__ == "__main__":
    main()
