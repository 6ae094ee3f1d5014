"""Fashion-MNIST as NumPy arrays, for every peer (PyTorch in fashion_epoch.py, MXNet in
mxnet_peers.py): the IDX .gz files of /usr/share/datasets/fashion-mnist (Debian's
dataset-fashion-mnist), pixels / 255 as float32 [N, 1, 28, 28], labels as int64. NumPy only, so
that it imports in the MXNet venv (build/bench-venv) as well as in Debian's interpreter."""
import gzip
import os
import struct
import sys

import numpy as np

ROOT = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"{path}: not an IDX file of unsigned bytes")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(root, train, limit):
    """(images float32 [N, 1, 28, 28] in [0, 1], labels int64 [N]); the first `limit` if set."""
    prefix = "train" if train else "t10k"
    images = read_idx(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"))
    if limit:
        images, labels = images[:limit], labels[:limit]
    x = np.ascontiguousarray((images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28))
    return x, labels.astype(np.int64)


def load_splits(root, limit):
    """x_train, y_train, x_test, y_test as NumPy arrays; with a limit, the first `limit` training
    samples and the first limit / 6 test samples (as Janus' --limit)."""
    x_train, y_train = load(root, True, limit)
    x_test, y_test = load(root, False, max(limit // 6, 1) if limit else 0)
    return x_train, y_train, x_test, y_test
