"""gluon.data.vision: MNIST, CIFAR10, CIFAR100 and ImageFolderDataset on small files written
in their formats to a temporary folder (images, labels, lengths, transforms, the DataLoader)
and their errors (missing, truncated, malformed files)."""
import gzip
import os
import struct
import sys
import types

import numpy as onp
import pytest

import janus as mx
from janus import gluon
from janus.gluon.data import vision
from janus.gluon.data.vision import transforms


def write_idx(path, array, compress=True):
    """An IDX file of a uint8 array (magic 0x0000080N, N = ndim, then the big-endian sizes)."""
    header = struct.pack(">I", 0x800 + array.ndim) + struct.pack(f">{array.ndim}I",
                                                                 *array.shape)
    data = header + array.astype(onp.uint8).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)


def write_mnist(root, split, n, seed=0):
    rs = onp.random.RandomState(seed)
    images = rs.randint(0, 256, (n, 28, 28)).astype(onp.uint8)
    labels = rs.randint(0, 10, n).astype(onp.uint8)
    write_idx(os.path.join(root, f"{split}-images-idx3-ubyte.gz"), images)
    write_idx(os.path.join(root, f"{split}-labels-idx1-ubyte.gz"), labels)
    return images, labels


def test_mnist_reads_images_as_uint8_hwc_and_int32_labels(tmp_path):
    train_x, train_y = write_mnist(tmp_path, "train", 5, seed=1)
    test_x, test_y = write_mnist(tmp_path, "t10k", 3, seed=2)
    train = vision.MNIST(root=str(tmp_path))
    test = vision.MNIST(root=str(tmp_path), train=False)
    assert len(train) == 5 and len(test) == 3
    for ds, xs, ys in ((train, train_x, train_y), (test, test_x, test_y)):
        for i in range(len(ds)):
            img, label = ds[i]
            assert img.shape == (28, 28, 1) and img.dtype == onp.uint8
            onp.testing.assert_array_equal(img.asnumpy()[:, :, 0], xs[i])
            assert label == ys[i] and isinstance(label, onp.int32)


def test_mnist_transform_and_to_tensor_loader(tmp_path):
    xs, ys = write_mnist(tmp_path, "train", 6)
    ds = vision.MNIST(root=str(tmp_path), transform=lambda x, y: (x.asnumpy().sum(), y + 1))
    assert ds[2] == (xs[2].astype(onp.int64).sum(), ys[2] + 1)
    # ToTensor alone keeps the C++ dataset (batched in C++): float32 [1, 28, 28] in [0, 1].
    tensors = vision.MNIST(root=str(tmp_path)).transform_first(transforms.ToTensor())
    x, y = next(iter(gluon.data.DataLoader(tensors, batch_size=6)))
    assert x.shape == (6, 1, 28, 28)
    onp.testing.assert_allclose(x.asnumpy()[:, 0], xs / 255.0, rtol=1e-6)
    onp.testing.assert_array_equal(y.asnumpy(), ys)
    # Any other transform runs per sample in Python, on MXNet's uint8 [28, 28, 1].
    resized = vision.MNIST(root=str(tmp_path)).transform_first(
        transforms.Compose([transforms.Resize(14), transforms.ToTensor()]))
    x, y = next(iter(gluon.data.DataLoader(resized, batch_size=4)))
    assert x.shape == (4, 1, 14, 14) and y.dtype == onp.int32


def test_mnist_reads_uncompressed_idx_under_the_gz_names(tmp_path):
    rs = onp.random.RandomState(3)
    images = rs.randint(0, 256, (2, 28, 28)).astype(onp.uint8)
    write_idx(os.path.join(tmp_path, "t10k-images-idx3-ubyte.gz"), images, compress=False)
    write_idx(os.path.join(tmp_path, "t10k-labels-idx1-ubyte.gz"), onp.array([7, 1]),
              compress=False)
    ds = vision.MNIST(root=str(tmp_path), train=False)
    onp.testing.assert_array_equal(ds[1][0].asnumpy()[:, :, 0], images[1])
    assert ds[0][1] == 7


def test_mnist_errors_name_the_files(tmp_path):
    with pytest.raises(mx.base.FileError) as e:
        vision.MNIST(root=str(tmp_path))
    msg = str(e.value)
    assert "MNIST (train set)" in msg and "cannot be downloaded" in msg
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"):
        assert os.path.join(str(tmp_path), name) in msg
    # A truncated image file: fewer bytes than its header announces.
    write_mnist(tmp_path, "t10k", 4)
    path = os.path.join(tmp_path, "t10k-images-idx3-ubyte.gz")
    with gzip.open(path, "rb") as f:
        data = f.read()
    with gzip.open(path, "wb") as f:
        f.write(data[:-100])
    with pytest.raises(mx.base.FormatError) as e:
        vision.MNIST(root=str(tmp_path), train=False)
    assert str(e.value).startswith("MNIST (test set)") and path in str(e.value)
    # Images of the wrong size.
    write_idx(path, onp.zeros((4, 27, 28), onp.uint8))
    with pytest.raises(mx.base.FormatError, match="27x28 pixels, expected 28x28"):
        vision.MNIST(root=str(tmp_path), train=False)


def write_cifar(path, n, label_ranges, seed):
    """n records: one byte per label range, then a 3x32x32 image (channel-major)."""
    rs = onp.random.RandomState(seed)
    labels = onp.stack([rs.randint(0, k, n) for k in label_ranges], axis=1).astype(onp.uint8)
    chw = rs.randint(0, 256, (n, 3, 32, 32)).astype(onp.uint8)
    with open(path, "wb") as f:
        f.write(onp.concatenate([labels, chw.reshape(n, -1)], axis=1).tobytes())
    return chw.transpose(0, 2, 3, 1), labels


def test_cifar10_reads_the_five_training_batches_and_the_test_batch(tmp_path):
    parts = [write_cifar(tmp_path / f"data_batch_{i}.bin", i, [10], seed=i) for i in range(1, 6)]
    test_x, test_y = write_cifar(tmp_path / "test_batch.bin", 2, [10], seed=9)
    train = vision.CIFAR10(root=str(tmp_path))
    assert len(train) == 1 + 2 + 3 + 4 + 5
    xs = onp.concatenate([p[0] for p in parts])
    ys = onp.concatenate([p[1][:, 0] for p in parts])
    for i in (0, 3, 14):
        img, label = train[i]
        assert img.shape == (32, 32, 3) and img.dtype == onp.uint8
        onp.testing.assert_array_equal(img.asnumpy(), xs[i])
        assert label == ys[i] and isinstance(label, onp.int32)
    test = vision.CIFAR10(root=str(tmp_path), train=False,
                          transform=lambda x, y: (x.asnumpy()[0, 0, 2], int(y)))
    assert len(test) == 2 and test[1] == (test_x[1, 0, 0, 2], test_y[1, 0])
    x, y = next(iter(gluon.data.DataLoader(train.transform_first(transforms.ToTensor()),
                                           batch_size=4)))
    assert x.shape == (4, 3, 32, 32)
    onp.testing.assert_allclose(x.asnumpy(), xs[:4].transpose(0, 3, 1, 2) / 255.0, rtol=1e-6)
    onp.testing.assert_array_equal(y.asnumpy(), ys[:4])


def test_cifar100_coarse_and_fine_labels(tmp_path):
    train_x, train_y = write_cifar(tmp_path / "train.bin", 4, [20, 100], seed=0)
    write_cifar(tmp_path / "test.bin", 3, [20, 100], seed=1)
    coarse = vision.CIFAR100(root=str(tmp_path))
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True)
    assert len(coarse) == len(fine) == 4 and len(vision.CIFAR100(str(tmp_path), train=False)) == 3
    for i in range(4):
        onp.testing.assert_array_equal(coarse[i][0].asnumpy(), train_x[i])
        assert coarse[i][1] == train_y[i, 0] and fine[i][1] == train_y[i, 1]


def test_cifar_errors_name_the_files(tmp_path):
    with pytest.raises(mx.base.FileError) as e:
        vision.CIFAR10(root=str(tmp_path))
    for i in range(1, 6):
        assert os.path.join(str(tmp_path), f"data_batch_{i}.bin") in str(e.value)
    assert "cifar-10-batches-bin" in str(e.value)
    with pytest.raises(mx.base.FileError, match="test.bin"):
        vision.CIFAR100(root=str(tmp_path), train=False)
    # Truncated: not a whole number of records.
    write_cifar(tmp_path / "test_batch.bin", 2, [10], seed=0)
    with open(tmp_path / "test_batch.bin", "r+b") as f:
        f.truncate(2 * 3073 - 5)
    with pytest.raises(mx.base.FormatError) as e:
        vision.CIFAR10(root=str(tmp_path), train=False)
    assert "CIFAR10 (test set)" in str(e.value) and "6141 bytes" in str(e.value)
    assert "multiple of 3073" in str(e.value)
    # A CIFAR-10 file read as CIFAR-100 (records of 3073 bytes, not 3074).
    write_cifar(tmp_path / "test.bin", 3, [10], seed=0)
    with pytest.raises(mx.base.FormatError, match="multiple of 3074"):
        vision.CIFAR100(root=str(tmp_path), train=False)
    # A label out of range.
    write_cifar(tmp_path / "test.bin", 2, [20, 100], seed=0)
    with open(tmp_path / "test.bin", "r+b") as f:
        f.seek(3074)
        f.write(bytes([20]))
    with pytest.raises(mx.base.FormatError, match=r"label 20 of record 1 is outside \[0, 19\]"):
        vision.CIFAR100(root=str(tmp_path), train=False)


def make_folder(root):
    """root/cat: two images; root/dog: one; plus files that are skipped."""
    rs = onp.random.RandomState(0)
    imgs = {"cat/a.npy": rs.randint(0, 256, (4, 5, 3)).astype(onp.uint8),
            "cat/b.npy": rs.randint(0, 256, (4, 5)).astype(onp.uint8),
            "dog/c.NPY": rs.randint(0, 256, (2, 3, 1)).astype(onp.uint8)}
    for d in ("cat", "dog", "empty"):
        os.makedirs(root / d)
    for name, a in imgs.items():
        onp.save(root / name, a)
        if not name.endswith(".npy"):  # numpy appends .npy to other names
            os.replace(str(root / name) + ".npy", root / name)
    (root / "cat" / "notes.txt").write_text("not an image")
    (root / "README").write_text("not a folder")
    return imgs


def test_image_folder_walks_classes_and_reads_npy(tmp_path):
    imgs = make_folder(tmp_path)
    with pytest.warns(UserWarning) as record:
        ds = vision.ImageFolderDataset(str(tmp_path))
    warned = " ".join(str(w.message) for w in record)
    assert "notes.txt" in warned and "README" in warned
    assert ds.synsets == ["cat", "dog", "empty"]
    assert ds.items == [(os.path.join(str(tmp_path), "cat", "a.npy"), 0),
                        (os.path.join(str(tmp_path), "cat", "b.npy"), 0),
                        (os.path.join(str(tmp_path), "dog", "c.NPY"), 1)]
    assert len(ds) == 3
    img, label = ds[0]
    assert img.dtype == onp.uint8 and label == 0
    onp.testing.assert_array_equal(img.asnumpy(), imgs["cat/a.npy"])
    # flag=1 gives 3 channels: a gray image is repeated.
    onp.testing.assert_array_equal(ds[1][0].asnumpy(), onp.repeat(imgs["cat/b.npy"][:, :, None],
                                                                  3, axis=2))
    assert ds[2][0].shape == (2, 3, 3) and ds[2][1] == 1
    # flag=0 gives 1 channel: BT.601 luma of a color image.
    with pytest.warns(UserWarning):
        gray = vision.ImageFolderDataset(str(tmp_path), flag=0,
                                         transform=lambda x, y: (x.asnumpy(), y * 10))
    a = imgs["cat/a.npy"].astype(onp.float64)
    expect = onp.rint(a @ [0.299, 0.587, 0.114]).astype(onp.uint8)
    img, label = gray[0]
    assert img.shape == (4, 5, 1) and label == 0
    assert onp.abs(img[:, :, 0].astype(int) - expect).max() <= 1
    onp.testing.assert_array_equal(gray[1][0][:, :, 0], imgs["cat/b.npy"])
    assert gray[2][1] == 10
    resized = ds.transform_first(transforms.Resize((6, 3)))
    assert resized[2][0].shape == (3, 6, 3) and resized[2][1] == 1


def test_image_folder_errors(tmp_path):
    with pytest.raises(mx.base.FileError, match="is not a folder"):
        vision.ImageFolderDataset(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="flag"):
        vision.ImageFolderDataset(str(tmp_path), flag=3)
    os.makedirs(tmp_path / "a")
    onp.save(tmp_path / "a" / "f.npy", onp.zeros((2, 2), onp.float32))
    onp.save(tmp_path / "a" / "g.npy", onp.zeros((2, 2, 4), onp.uint8))
    (tmp_path / "a" / "h.npy").write_bytes(b"not npy")
    (tmp_path / "a" / "i.png").write_bytes(b"\x89PNG not really")
    ds = vision.ImageFolderDataset(str(tmp_path))
    with pytest.raises(mx.base.FormatError, match=r"f.npy' holds a float32 array of shape"):
        ds[0]
    with pytest.raises(mx.base.FormatError, match=r"g.npy' holds a uint8 array of shape \(2, 2, 4"):
        ds[1]
    with pytest.raises(mx.base.FormatError, match="h.npy' is not a NumPy .npy array"):
        ds[2]
    try:
        import PIL  # noqa: F401
    except ImportError:
        with pytest.raises(mx.base.NotSupportedError) as e:
            ds[3]
        assert "i.png" in str(e.value) and "Pillow" in str(e.value)


def test_image_folder_decodes_through_pillow_when_present(tmp_path, monkeypatch):
    """The Pillow path with a stand-in module (Pillow is not installed here): the mode asked
    for follows flag, and the image comes back as uint8 [H, W, C]."""
    modes = []

    class FakeImage:
        def __init__(self, path):
            self.path = path

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def convert(self, mode):
            modes.append(mode)
            if "broken" in self.path:
                raise OSError("cannot identify image file")
            return onp.full((2, 3, 3) if mode == "RGB" else (2, 3), 7, onp.uint8)

    image_module = types.SimpleNamespace(open=FakeImage)
    monkeypatch.setitem(sys.modules, "PIL", types.SimpleNamespace(Image=image_module))
    monkeypatch.setitem(sys.modules, "PIL.Image", image_module)
    os.makedirs(tmp_path / "x")
    (tmp_path / "x" / "a.jpg").write_bytes(b"")
    (tmp_path / "x" / "broken.png").write_bytes(b"")
    assert vision.ImageFolderDataset(str(tmp_path))[0][0].shape == (2, 3, 3)
    assert vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0].shape == (2, 3, 1)
    assert modes == ["RGB", "L"]
    with pytest.raises(mx.base.FormatError, match="cannot decode '.*broken.png'"):
        vision.ImageFolderDataset(str(tmp_path))[1]
