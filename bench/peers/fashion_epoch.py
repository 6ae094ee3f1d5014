#!/usr/bin/python3
"""PyTorch peer of Janus' Fashion-MNIST training (bench/fashion_accuracy.cc, training/train.cc).

Trains the same model on the same data in the same way and prints, per epoch, the training
time and the test accuracy, then one JSON line:
  {"bench": "fashion_epoch_torch", "model": "mlp", "threads": 2, "epoch_s": [...], ...}

Same as Janus (training/models.cc, training/train.cc):
  - data: the IDX .gz files of /usr/share/datasets/fashion-mnist, pixels / 255 as float32
    [N, 1, 28, 28], labels int64; training batches drawn from a fresh random permutation each
    epoch (the last, smaller batch kept); test accuracy on batches of 1024, not timed;
  - models: mlp = Flatten, Linear(784, 256), ReLU, Linear(256, 10); lenet = Conv(1->6, 5x5,
    pad 2), ReLU, MaxPool 2, Conv(6->16, 5x5), ReLU, MaxPool 2, Flatten, Linear(400, 120), ReLU,
    Linear(120, 84), ReLU, Linear(84, 10);
  - initialisation: weights Xavier uniform (gain 1: bound sqrt(6 / (fan_in + fan_out)), the
    fans counting the kernel's area), biases zero;
  - loss: softmax cross-entropy averaged over the batch (Janus sums per-sample losses and the
    trainer rescales the gradient by 1 / batch size: the same gradient);
  - optimizer: SGD with momentum (MXNet's mom = m*mom - lr*g; w += mom equals PyTorch's
    buf = m*buf + g; w -= lr*buf for a constant learning rate), weight decay 0;
  - intra-op threads: torch.set_num_threads(--threads), which should be Janus' kernel threads.
The timed part of an epoch is the training loop including batch assembly, as in Janus.

Run with Debian's interpreter (/usr/bin/python3), where python3-torch lives:
  /usr/bin/python3 bench/peers/fashion_epoch.py --model lenet --threads 2 --epochs 1 \
      --batch-size 128 --lr 0.05 --momentum 0.9
"""
import argparse
import json
import os
import sys
import time

import torch
from torch import nn

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree by the import below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_data  # noqa: E402  (the data as NumPy arrays, shared with the MXNet peer)

ROOT = fashion_data.ROOT


def blas_library():
    """The BLAS library this process has mapped (Debian's torch uses the system libblas.so.3)."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path).lower():
                paths.add(os.path.realpath(path))
    return ", ".join(sorted(paths)) or "none mapped"


def make_model(name):
    if name == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    elif name == "lenet":
        net = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10))
    else:
        sys.exit(f"unknown model {name!r}, expected mlp or lenet")
    for m in net.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return net


def load_splits(root, limit):
    """x_train, y_train, x_test, y_test as tensors (fashion_data.load_splits)."""
    return tuple(torch.from_numpy(a) for a in fashion_data.load_splits(root, limit))


def make_optimizer(net, lr, momentum):
    """SGD as Janus' "sgd" optimizer with momentum (see the top of this file), weight decay 0."""
    return torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)


def train_epoch(net, opt, loss_fn, x_train, y_train, batch_size):
    """One training epoch; returns (seconds, mean loss, train accuracy). The timed part is the
    whole loop, batch assembly included, as in Janus. `net` may be a TorchScript module."""
    n = x_train.shape[0]
    net.train()
    loss_sum = torch.zeros(())
    correct = torch.zeros((), dtype=torch.int64)
    start = time.perf_counter()
    perm = torch.randperm(n)
    for i in range(0, n, batch_size):
        idx = perm[i:i + batch_size]
        x, y = x_train[idx], y_train[idx]
        out = net(x)
        loss = loss_fn(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            loss_sum += loss.detach() * y.shape[0]
            correct += (out.argmax(1) == y).sum()
    seconds = time.perf_counter() - start
    return seconds, float(loss_sum) / n, int(correct) / n


def evaluate(net, x_test, y_test):
    """Test accuracy on batches of 1024, as Janus' evaluation (not timed by the callers)."""
    net.eval()
    hits = 0
    with torch.no_grad():
        for i in range(0, x_test.shape[0], 1024):
            hits += int((net(x_test[i:i + 1024]).argmax(1) == y_test[i:i + 1024]).sum())
    return hits / x_test.shape[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["mlp", "lenet"], default="mlp")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="first N training samples (0: all)")
    p.add_argument("--data", default=ROOT)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x_train, y_train, x_test, y_test = load_splits(a.data, a.limit)
    net = make_model(a.model)
    opt = make_optimizer(net, a.lr, a.momentum)
    loss_fn = nn.CrossEntropyLoss()
    n = x_train.shape[0]
    print(f"BLAS behind torch: {blas_library()}", flush=True)
    print(f"torch {torch.__version__}: {a.model} on Fashion-MNIST ({n} train / "
          f"{x_test.shape[0]} test), batch {a.batch_size}, SGD lr {a.lr} momentum {a.momentum}, "
          f"{torch.get_num_threads()} threads", flush=True)

    epoch_s, test_acc = [], []
    for epoch in range(1, a.epochs + 1):
        seconds, loss, train_acc = train_epoch(net, opt, loss_fn, x_train, y_train, a.batch_size)
        acc = evaluate(net, x_test, y_test)
        epoch_s.append(seconds)
        test_acc.append(acc)
        print(f"epoch {epoch:>2}/{a.epochs}: loss {loss:.4f}, train acc "
              f"{train_acc:.4f}, test acc {acc:.4f}, {seconds:.1f} s "
              f"({n / seconds:.0f} samples/s)", flush=True)

    print(json.dumps({"bench": "fashion_epoch_torch", "model": a.model,
                      "threads": torch.get_num_threads(), "batch_size": a.batch_size,
                      "lr": a.lr, "momentum": a.momentum, "epochs": a.epochs,
                      "epoch_s": epoch_s, "last_epoch_s": epoch_s[-1],
                      "test_acc": test_acc[-1]}), flush=True)


if __name__ == "__main__":
    main()
