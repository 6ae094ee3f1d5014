"""``gluon.data.vision.datasets``: Fashion-MNIST from the Debian package
``dataset-fashion-mnist``; MNIST, CIFAR-10 and CIFAR-100 from MXNet's files in ``root``
(nothing is downloaded: there is no network here); ``ImageFolderDataset`` over a folder per
class.

MNIST, CIFAR and ImageFolderDataset give MXNet's samples: ``(uint8 image [H, W, C], label)``,
the label an int32 (MNIST, CIFAR) or an int (ImageFolderDataset); ``transform(image, label)``
is applied to each sample when it is read."""
import os as _os
import warnings as _warnings

import numpy as _onp

from .... import _janus
from .... import base as _base


def FashionMNIST(root=None, train=True, transform=None):
    """The training (``train``) or test set: samples ``(float32 [1, 28, 28] in [0, 1], int32
    label)``, read from ``root`` (default /usr/share/datasets/fashion-mnist). MXNet's
    ``~/.mxnet/...`` roots fall back to the default."""
    if root is not None and not _os.path.exists(_os.path.join(_os.path.expanduser(root),
                                                              "train-images-idx3-ubyte.gz")):
        root = None
    ds = _janus.FashionMNIST(None if root is None else _os.path.expanduser(root), train)
    return ds if transform is None else ds.transform(transform)


def _default_root(name):
    """MXNet's folder for dataset ``name``: ``$MXNET_HOME/datasets/NAME``."""
    home = _os.environ.get("MXNET_HOME", _os.path.join("~", ".mxnet"))
    return _os.path.join(home, "datasets", name)


def _check_files(dataset, paths, hint=""):
    """FileError naming every path of ``paths`` that does not exist."""
    missing = [p for p in paths if not _os.path.isfile(p)]
    if missing:
        raise _base.FileError(
            f"{dataset}: missing {', '.join(repr(p) for p in missing)} (datasets cannot be "
            f"downloaded here: put MXNet's files in that folder or pass their folder as "
            f"root{hint})")


class _ImageLabelDataset:
    """Samples ``(images[i], labels[i])`` of a uint8 [N, H, W, C] NumPy array and int32 labels,
    through ``transform(image, label)`` if given; images are returned as Janus arrays."""

    def __init__(self, images, labels, transform):
        if transform is not None and not callable(transform):
            raise TypeError(f"{type(self).__name__}: transform {transform!r} is not callable")
        self._images, self._label, self._transform = images, labels, transform

    def __len__(self):
        return len(self._label)

    def __getitem__(self, i):
        from .... import numpy as np
        image, label = np.array(self._images[i]), self._label[i]
        return (image, label) if self._transform is None else self._transform(image, label)

    def transform(self, fn, lazy=True):
        from .. import _TransformedDataset
        return _TransformedDataset(self, fn, False)

    def transform_first(self, fn, lazy=True):
        from .. import _TransformedDataset
        return _TransformedDataset(self, fn, True)


class MNIST(_ImageLabelDataset):
    """The MNIST training (``train``) or test set from MXNet's files in ``root`` (default
    ``~/.mxnet/datasets/mnist``): ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``
    or ``t10k-...`` (IDX files, gzipped or not, read by Fashion-MNIST's reader). Samples:
    ``(uint8 [28, 28, 1], int32 label)``. ``transform_first(ToTensor())`` alone gives the C++
    dataset of float32 [1, 28, 28] images, which the DataLoader batches in C++."""

    def __init__(self, root=None, train=True, transform=None):
        root = _os.path.expanduser(_default_root("mnist") if root is None else root)
        split = "train" if train else "t10k"
        _check_files(f"{type(self).__name__} ({'train' if train else 'test'} set)",
                     [_os.path.join(root, f"{split}-{kind}-idx{dims}-ubyte.gz")
                      for kind, dims in (("images", 3), ("labels", 1))])
        try:
            self._tensors = _janus.FashionMNIST(root, train)
        except _base.MXNetError as e:  # the reader's context names Fashion-MNIST
            msg = str(e)
            if msg.startswith("FashionMNIST"):
                msg = type(self).__name__ + msg[len("FashionMNIST"):]
            raise type(e)(msg) from None
        n = len(self._tensors)
        images = _onp.zeros((0, 28, 28, 1), _onp.uint8)
        labels = _onp.zeros((0,), _onp.int32)
        if n:
            x, y = next(iter(_janus.DataLoader(self._tensors, n, False, "keep", 0)))
            # float32 [N, 1, 28, 28] = uint8 / 255: back to the bytes of the file, NHWC.
            images = _onp.rint(_onp.moveaxis(x.asnumpy(), 1, -1) * 255).astype(_onp.uint8)
            labels = y.asnumpy().astype(_onp.int32)
        super().__init__(images, labels, transform)

    def transform_first(self, fn, lazy=True):
        from . import transforms
        if self._transform is None and transforms._is_to_tensor(fn):
            return self._tensors
        return super().transform_first(fn, lazy)


def _read_cifar(path, label_bytes, num_classes):
    """The images (uint8 [N, 32, 32, 3]) and labels (uint8 [N, label_bytes]) of a CIFAR binary
    file: records of ``label_bytes`` label bytes then a 3x32x32 image, channel-major."""
    record = label_bytes + 3 * 32 * 32
    with open(path, "rb") as f:
        raw = _onp.frombuffer(f.read(), dtype=_onp.uint8)
    if raw.size == 0 or raw.size % record:
        raise _base.FormatError(
            f"'{path}' holds {raw.size} bytes, expected a positive multiple of {record} (records "
            f"of {label_bytes} label byte{'s' if label_bytes > 1 else ''} and a 3x32x32 image): "
            "the file is truncated or not a CIFAR binary file")
    raw = raw.reshape(-1, record)
    labels = raw[:, :label_bytes]
    for k, n in enumerate(num_classes):
        bad = _onp.flatnonzero(labels[:, k] >= n)
        if bad.size:
            raise _base.FormatError(f"'{path}': label {labels[bad[0], k]} of record {bad[0]} "
                                    f"is outside [0, {n - 1}]")
    images = raw[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return _onp.ascontiguousarray(images), labels


class CIFAR10(_ImageLabelDataset):
    """The CIFAR-10 training (``train``: ``data_batch_1.bin`` ... ``data_batch_5.bin``) or
    test (``test_batch.bin``) set from the binary version's files in ``root`` (default
    ``~/.mxnet/datasets/cifar10``). Samples: ``(uint8 [32, 32, 3], int32 label)``."""

    def __init__(self, root=None, train=True, transform=None):
        root = _os.path.expanduser(_default_root("cifar10") if root is None else root)
        names = [f"data_batch_{i}.bin" for i in range(1, 6)] if train else ["test_batch.bin"]
        images, labels = self._read(root, names, train, "cifar-10-batches-bin")
        super().__init__(images, labels[:, 0].astype(_onp.int32), transform)

    def _read(self, root, names, train, folder, label_bytes=1, num_classes=(10,)):
        paths = [_os.path.join(root, n) for n in names]
        context = f"{type(self).__name__} ({'train' if train else 'test'} set)"
        _check_files(context, paths, f"; the official archive extracts them to '{folder}'")
        try:
            parts = [_read_cifar(p, label_bytes, num_classes) for p in paths]
        except _base.FormatError as e:
            raise _base.FormatError(f"{context}: {e}") from None
        return (_onp.concatenate([p[0] for p in parts]),
                _onp.concatenate([p[1] for p in parts]))


class CIFAR100(CIFAR10):
    """The CIFAR-100 training (``train.bin``) or test (``test.bin``) set from the binary
    version's files in ``root`` (default ``~/.mxnet/datasets/cifar100``). Samples: ``(uint8
    [32, 32, 3], int32 label)``, the label of the 100 fine classes with ``fine_label``, else of
    the 20 coarse ones."""

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        root = _os.path.expanduser(_default_root("cifar100") if root is None else root)
        images, labels = self._read(root, ["train.bin" if train else "test.bin"], train,
                                    "cifar-100-binary", label_bytes=2, num_classes=(20, 100))
        _ImageLabelDataset.__init__(self, images, labels[:, 1 if fine_label else 0]
                                    .astype(_onp.int32), transform)


def _decode(path, flag):
    """The image in ``path`` as uint8 [H, W, C] (C = 3, RGB, with ``flag`` 1; 1, gray, with
    0): ``.npy`` files directly, others through Pillow when it is installed."""
    if path.lower().endswith(".npy"):
        try:
            a = _onp.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise _base.FormatError(f"ImageFolderDataset: '{path}' is not a NumPy .npy array: "
                                    f"{e}") from None
        if a.dtype != _onp.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and
                                                             a.shape[2] not in (1, 3)):
            raise _base.FormatError(f"ImageFolderDataset: '{path}' holds a {a.dtype} array of "
                                    f"shape {a.shape}, expected uint8 [H, W], [H, W, 1] or "
                                    "[H, W, 3]")
        a = a.reshape(a.shape[0], a.shape[1], -1)
        if flag and a.shape[2] == 1:
            a = _onp.repeat(a, 3, axis=2)
        elif not flag and a.shape[2] == 3:  # ITU-R BT.601 luma, as OpenCV's and Pillow's gray
            luma = a.astype(_onp.float32) @ _onp.array([0.299, 0.587, 0.114], _onp.float32)
            a = _onp.clip(_onp.rint(luma), 0, 255).astype(_onp.uint8)[:, :, None]
        return a
    try:
        from PIL import Image
    except ImportError:
        raise _base.NotSupportedError(
            f"ImageFolderDataset: cannot decode '{path}': decoding JPEG and PNG images needs "
            "Pillow (the Python package PIL), which is not installed; install it, or store "
            "the images as uint8 NumPy .npy arrays [H, W, C]") from None
    try:
        with Image.open(path) as img:
            a = _onp.asarray(img.convert("RGB" if flag else "L"), dtype=_onp.uint8)
    except OSError as e:
        raise _base.FormatError(f"ImageFolderDataset: cannot decode '{path}': {e}") from None
    return a.reshape(a.shape[0], a.shape[1], -1)


class ImageFolderDataset:
    """Images in a folder per class: ``root/CLASS/IMAGE``. ``synsets``: the class folders'
    names, sorted (label i is ``synsets[i]``); ``items``: (path, label) of every image, sorted
    by class then by file name. Files other than .jpg, .jpeg, .png (decoded by Pillow, as
    MXNet by OpenCV) and .npy (uint8 arrays, read by NumPy) are skipped with a warning, as are
    files directly in ``root``. ``flag`` 1: 3-channel RGB images, 0: gray; samples are
    ``(uint8 [H, W, C], label)`` through ``transform(image, label)`` if given."""

    _exts = (".jpg", ".jpeg", ".png", ".npy")

    def __init__(self, root, flag=1, transform=None):
        if flag not in (0, 1):
            raise ValueError(f"ImageFolderDataset: flag is {flag!r}, expected 1 (color) or 0 "
                             "(gray)")
        if transform is not None and not callable(transform):
            raise TypeError(f"ImageFolderDataset: transform {transform!r} is not callable")
        self._root = _os.path.expanduser(root)
        self._flag, self._transform = flag, transform
        if not _os.path.isdir(self._root):
            raise _base.FileError(f"ImageFolderDataset: root '{self._root}' is not a folder "
                                  "(expected one subfolder of images per class)")
        self.synsets, self.items = [], []
        for folder in sorted(_os.listdir(self._root)):
            path = _os.path.join(self._root, folder)
            if not _os.path.isdir(path):
                _warnings.warn(f"ImageFolderDataset: ignoring '{path}', which is not a folder",
                               stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(_os.listdir(path)):
                filename = _os.path.join(path, name)
                ext = _os.path.splitext(name)[1]
                if ext.lower() not in self._exts:
                    _warnings.warn(f"ImageFolderDataset: ignoring '{filename}' of type '{ext}' "
                                   f"(expected one of {', '.join(self._exts)})", stacklevel=2)
                    continue
                self.items.append((filename, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        from .... import numpy as np
        path, label = self.items[i]
        image = np.array(_decode(path, self._flag))
        return (image, label) if self._transform is None else self._transform(image, label)

    def transform(self, fn, lazy=True):
        from .. import _TransformedDataset
        return _TransformedDataset(self, fn, False)

    def transform_first(self, fn, lazy=True):
        from .. import _TransformedDataset
        return _TransformedDataset(self, fn, True)
