"""``gluon.data``: datasets and the DataLoader, both in C++ (batches are gathered by C++ worker
threads, never under the GIL); a dataset transformed in Python is gathered in Python, by a pool
of ``num_workers`` threads."""
import collections as _collections
import concurrent.futures as _futures

import numpy as onp

from ... import _janus
from . import vision  # noqa: F401

Dataset = _janus.Dataset


def ArrayDataset(*arrays):
    """Samples i of each array (their first axis indexes the samples)."""
    from ... import numpy as np
    return _janus.ArrayDataset(*[a if isinstance(a, np.ndarray) else np.array(a) for a in arrays])


class SimpleDataset:
    """A dataset over any sequence (a list, a NumPy or Janus array): sample i is ``data[i]``;
    ``transform``/``transform_first`` as on every dataset."""

    def __init__(self, data):
        if not hasattr(data, "__len__") or not hasattr(data, "__getitem__"):
            raise TypeError(f"SimpleDataset: {type(data).__name__} is not a sequence (it needs "
                            "__len__ and __getitem__)")
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, i):
        return self._data[i]

    def transform(self, fn, lazy=True):
        return _TransformedDataset(self, fn, False)

    def transform_first(self, fn, lazy=True):
        return _TransformedDataset(self, fn, True)


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
    __getitem__), gathered in Python: on the loop's thread, or with ``num_workers`` by a pool
    of threads that keeps up to ``prefetch`` batches in work ahead of the loop and hands them
    out in order. (Threads, not MXNet's processes: a forked child would hold a copy of the
    engine without its worker threads, and C++ datasets do not pickle for spawned ones. The
    gather overlaps with the loop's engine calls and waits, which release the GIL.)"""

    def __init__(self, dataset, batch_size, shuffle, last_batch, num_workers, prefetch):
        if last_batch not in ("keep", "discard"):
            raise NotImplementedError(f"DataLoader: last_batch '{last_batch}' is not supported "
                                      "for a dataset transformed in Python (keep, discard are)")
        self._ds, self._bs, self._shuffle, self._keep = dataset, batch_size, shuffle, \
            last_batch == "keep"
        self._workers, self._prefetch = num_workers, prefetch

    def __len__(self):
        n = len(self._ds)
        return -(-n // self._bs) if self._keep else n // self._bs

    def _batches(self):
        """The sample indices of each batch of one epoch."""
        n = len(self._ds)
        order = onp.arange(n)
        if self._shuffle and n > 1:
            order = onp.argsort(_janus.random_uniform(0.0, 1.0, (n,)).asnumpy(), kind="stable")
        return [order[b * self._bs:(b + 1) * self._bs] for b in range(len(self))]

    def _gather(self, indices):
        samples = []
        for i in indices:
            try:
                samples.append(self._ds[int(i)])
            except Exception as e:  # noqa: BLE001 (re-raised, naming the sample)
                raise _sample_error(int(i), e) from e
        if isinstance(samples[0], tuple):
            return tuple(_stack([s[k] for s in samples]) for k in range(len(samples[0])))
        return _stack(samples)

    def __iter__(self):
        batches = self._batches()
        if self._workers == 0:
            for indices in batches:
                yield self._gather(indices)
            return
        pool = _futures.ThreadPoolExecutor(self._workers, thread_name_prefix="janus-loader")
        pending = _collections.deque()
        try:
            for indices in batches:
                pending.append(pool.submit(self._gather, indices))
                if len(pending) >= self._prefetch:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # also when the loop stops early: drop what has not started
            pool.shutdown(wait=True, cancel_futures=True)


def _sample_error(index, e):
    """``e`` with the sample's index in its message (its own type when that can be built from
    a message, else RuntimeError)."""
    msg = f"DataLoader: reading sample {index} failed: {type(e).__name__}: {e}"
    try:
        return type(e)(msg)
    except Exception:  # noqa: BLE001
        return RuntimeError(msg)


class DataLoader:
    """Batches of a dataset: each iteration is one epoch (``shuffle`` draws a new order each
    epoch); a batch is ``(X, y)`` for datasets of two arrays."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120, **kwargs):
        if sampler is not None or batch_sampler is not None or batchify_fn is not None:
            raise NotImplementedError("DataLoader: samplers and batchify_fn are not supported")
        if batch_size is None or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size is {batch_size}, expected a positive int")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers is {num_workers!r}, expected an int >= 0")
        prefetch = 2 * num_workers if prefetch is None else prefetch
        if not isinstance(prefetch, int) or prefetch < 0:
            raise ValueError(f"DataLoader: prefetch is {prefetch!r}, expected an int >= 0")
        if isinstance(dataset, _janus.Dataset):
            self._loader = _janus.DataLoader(dataset, batch_size, shuffle, last_batch or "keep",
                                             num_workers)
        else:
            self._loader = _PyLoader(dataset, batch_size, shuffle, last_batch or "keep",
                                     num_workers, max(prefetch, 1))

    def __iter__(self):
        return iter(self._loader)

    def __len__(self):
        return len(self._loader)
