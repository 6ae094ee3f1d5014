"""``gluon.data``: datasets and the DataLoader, both in C++ (batches are gathered by C++ worker
threads, never under the GIL)."""
import numpy as onp

from ... import _janus
from . import vision  # noqa: F401

Dataset = _janus.Dataset


def ArrayDataset(*arrays):
    """Samples i of each array (their first axis indexes the samples)."""
    from ... import numpy as np
    return _janus.ArrayDataset(*[a if isinstance(a, np.ndarray) else np.array(a) for a in arrays])


class _TransformedDataset:
    """A dataset whose samples are ``fn(*sample)`` (or, with ``first_only``, the sample with
    ``fn`` applied to its first element), computed in Python when an item is read. Janus's
    FashionMNIST images reach ``fn`` as MXNet's do: uint8 [28, 28, 1]."""

    def __init__(self, base, fn, first_only):
        if not callable(fn):
            raise TypeError(f"transform: {fn!r} is not callable")
        self._base, self._fn, self._first_only = base, fn, first_only
        self._raw_images = isinstance(base, _janus.FashionMNIST)

    def __len__(self):
        return len(self._base)

    def __getitem__(self, i):
        sample = self._base[i]
        if not isinstance(sample, tuple):
            sample = (sample,)
        if self._raw_images:
            # float32 [1, H, W] = uint8 / 255 back to the uint8 [H, W, 1] it was decoded from.
            from ... import numpy as np
            img = sample[0].asnumpy()
            raw = onp.rint(onp.moveaxis(img, 0, -1) * 255).astype(onp.uint8)
            sample = (np.array(raw),) + sample[1:]
        if self._first_only:
            out = (self._fn(sample[0]),) + sample[1:]
        else:
            out = self._fn(*sample)
        return out[0] if isinstance(out, tuple) and len(out) == 1 else out

    def transform(self, fn, lazy=True):
        return _TransformedDataset(self, fn, False)

    def transform_first(self, fn, lazy=True):
        return _TransformedDataset(self, fn, True)


def _transform_first(self, fn, lazy=True):
    # Janus's FashionMNIST already gives float32 [C, H, W] images in [0, 1] (what ToTensor
    # makes of MXNet's uint8 [H, W, C]): ToTensor alone keeps the C++ dataset (batches gathered
    # by C++ workers). Any other transform runs in Python per sample.
    if isinstance(self, _janus.FashionMNIST) and vision.transforms._is_to_tensor(fn):
        return self
    return _TransformedDataset(self, fn, True)


def _transform(self, fn, lazy=True):
    return _TransformedDataset(self, fn, False)


Dataset.transform_first = _transform_first
Dataset.transform = _transform


def _stack(items):
    """One batch field from the samples' values (arrays, numbers)."""
    from ... import numpy as np
    first = items[0]
    if hasattr(first, "asnumpy"):
        return np.array(onp.stack([x.asnumpy() for x in items]))
    return np.array(onp.asarray(items))


class _PyLoader:
    """Batches of a Python dataset (a transformed one, or any object with __len__ and
    __getitem__), gathered in Python."""

    def __init__(self, dataset, batch_size, shuffle, last_batch):
        if last_batch not in ("keep", "discard"):
            raise NotImplementedError(f"DataLoader: last_batch '{last_batch}' is not supported "
                                      "for a dataset transformed in Python (keep, discard are)")
        self._ds, self._bs, self._shuffle, self._keep = dataset, batch_size, shuffle, \
            last_batch == "keep"

    def __len__(self):
        n = len(self._ds)
        return -(-n // self._bs) if self._keep else n // self._bs

    def __iter__(self):
        n = len(self._ds)
        order = onp.arange(n)
        if self._shuffle and n > 1:
            order = onp.argsort(_janus.random_uniform(0.0, 1.0, (n,)).asnumpy(), kind="stable")
        for b in range(len(self)):
            samples = [self._ds[int(i)] for i in order[b * self._bs:(b + 1) * self._bs]]
            if isinstance(samples[0], tuple):
                yield tuple(_stack([s[k] for s in samples]) for k in range(len(samples[0])))
            else:
                yield _stack(samples)


class DataLoader:
    """Batches of a dataset: each iteration is one epoch (``shuffle`` draws a new order each
    epoch); a batch is ``(X, y)`` for datasets of two arrays."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, **kwargs):
        if sampler is not None or batch_sampler is not None or batchify_fn is not None:
            raise NotImplementedError("DataLoader: samplers and batchify_fn are not supported")
        if batch_size is None or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size is {batch_size}, expected a positive int")
        if isinstance(dataset, _janus.Dataset):
            self._loader = _janus.DataLoader(dataset, batch_size, shuffle, last_batch or "keep",
                                             num_workers)
        else:
            self._loader = _PyLoader(dataset, batch_size, shuffle, last_batch or "keep")

    def __iter__(self):
        return iter(self._loader)

    def __len__(self):
        return len(self._loader)
