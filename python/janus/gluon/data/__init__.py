"""``gluon.data``: datasets and the DataLoader, both in C++ (batches are gathered by C++ worker
threads, never under the GIL); a dataset transformed in Python is gathered in Python, by
``num_workers`` worker processes (MXNet's default), or threads with ``thread_pool=True``."""
import collections as _collections
import concurrent.futures as _futures
import multiprocessing as _mp
import os as _os
import pickle as _pickle
import signal as _signal

import numpy as onp

from ... import _janus
from . import sampler, vision  # noqa: F401
from .sampler import (BatchSampler, FilterSampler, RandomSampler, Sampler,  # noqa: F401
                      SequentialSampler)

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


def _gather(dataset, indices, batchify):
    """One batch of ``dataset``: ``batchify`` of its samples at ``indices``; a failing sample
    is named in the error."""
    samples = []
    for i in indices:
        try:
            samples.append(dataset[int(i)])
        except Exception as e:  # noqa: BLE001 (re-raised, naming the sample)
            raise _sample_error(int(i), e) from e
    return batchify(samples)


def _stack_fields(stack):
    """The default batchify: each field of the samples stacked by ``stack``."""
    def batchify(samples):
        if isinstance(samples[0], tuple):
            return tuple(stack([s[k] for s in samples]) for k in range(len(samples[0])))
        return stack(samples)
    return batchify


def _as_numpy(batch):
    """A batch made by a user's batchify_fn in a worker process, with every Janus array as a
    NumPy buffer (the parent makes them Janus arrays again)."""
    if isinstance(batch, (tuple, list)):
        return type(batch)(_as_numpy(b) for b in batch)
    return batch.asnumpy() if hasattr(batch, "asnumpy") else batch


def _stack_numpy(items):
    """``_stack`` in NumPy (a worker process hands batches over as NumPy buffers)."""
    first = items[0]
    if hasattr(first, "asnumpy"):
        return onp.stack([x.asnumpy() for x in items])
    return onp.asarray(items)


# The dataset of this worker process, or the error that its start met (set by _worker_start).
_worker_dataset = None
_worker_error = None


def _worker_start(dataset, batchify_fn, seed):
    """First call of a worker process, forked from the loop's process: Janus's engine there is
    the parent's copy, whose threads exist only in the parent, so the worker switches to an
    engine of its own before anything else; Ctrl-C is for the parent, which ends the workers;
    each worker draws from its own random stream (seed + its process number). It never raises
    (a pool whose workers fail to start forks new ones without end): an error is handed to the
    parent with the first batch."""
    global _worker_dataset, _worker_error
    try:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        _janus._use_naive_engine_after_fork()
        identity = _mp.current_process()._identity
        _janus.seed((seed + (identity[-1] if identity else 0)) % (1 << 63))
        _worker_dataset = dataset, batchify_fn
    except BaseException as e:  # noqa: BLE001 (handed to the parent)
        _worker_error = RuntimeError(f"DataLoader: a worker process failed to start: "
                                     f"{type(e).__name__}: {e}")


def _worker_gather(indices):
    """A batch gathered in a worker: (True, NumPy fields) or (False, the pickled error). The
    error is pickled here, falling back to a RuntimeError with its message, so that the parent
    always gets one it can rebuild."""
    try:
        if _worker_error is not None:
            raise _worker_error
        dataset, batchify_fn = _worker_dataset
        if batchify_fn is None:
            return True, _gather(dataset, indices, _stack_fields(_stack_numpy))
        return True, _as_numpy(_gather(dataset, indices, batchify_fn))
    except Exception as e:  # noqa: BLE001 (handed to the parent)
        try:
            blob = _pickle.dumps(e)
            _pickle.loads(blob)
        except Exception:  # noqa: BLE001
            blob = _pickle.dumps(RuntimeError(f"{type(e).__name__}: {e}"))
        return False, blob


def _to_janus(batch):
    """A batch from a worker process: its NumPy arrays as Janus arrays."""
    from ... import numpy as np
    if isinstance(batch, (tuple, list)):
        return type(batch)(_to_janus(b) for b in batch)
    return np.array(batch) if isinstance(batch, onp.ndarray) else batch


class _PyLoader:
    """Batches of a Python dataset (a transformed one, or any object with __len__ and
    __getitem__), gathered in Python: on the loop's thread, or with ``num_workers`` by workers
    that keep up to ``prefetch`` batches in work ahead of the loop and hand them out in order.

    The workers are processes forked from this one (as MXNet's, ``thread_pool=False``): a
    transform written in Python then runs in parallel instead of taking turns at the GIL. A
    worker runs Janus operators on an engine of its own (the parent's engine threads do not
    exist in it), single-threaded; its batches come back as NumPy buffers, copied once into
    Janus arrays. The pool is forked when the first epoch starts, after the parent's engine
    has finished its work (no engine lock is then held), and kept for the next epochs; an
    epoch that ends early (break, an error, Ctrl-C) terminates it. With ``thread_pool=True``
    the workers are threads (no fork; the gather overlaps with the loop's engine calls and
    waits, which release the GIL)."""

    def __init__(self, dataset, batch_sampler, batchify_fn, num_workers, prefetch, thread_pool,
                 timeout):
        self._ds, self._sampler, self._batchify_fn = dataset, batch_sampler, batchify_fn
        self._batchify = batchify_fn or _stack_fields(_stack)
        self._workers, self._prefetch = num_workers, prefetch
        self._threads = thread_pool or "fork" not in _mp.get_all_start_methods()
        self._timeout = timeout
        self._pool = None

    def __len__(self):
        return len(self._sampler)

    def _batches(self):
        """The sample indices of each batch of one epoch."""
        return [list(b) for b in self._sampler]

    def __iter__(self):
        batches = self._batches()
        if self._workers == 0:
            for indices in batches:
                yield _gather(self._ds, indices, self._batchify)
            return
        if self._threads:
            yield from self._thread_epoch(batches)
        else:
            yield from self._process_epoch(batches)

    def _thread_epoch(self, batches):
        pool = _futures.ThreadPoolExecutor(self._workers, thread_name_prefix="janus-loader")
        pending = _collections.deque()
        try:
            for indices in batches:
                pending.append(pool.submit(_gather, self._ds, indices, self._batchify))
                if len(pending) >= self._prefetch:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # also when the loop stops early: drop what has not started
            pool.shutdown(wait=True, cancel_futures=True)

    def _process_epoch(self, batches):
        if self._pool is None:
            _janus.waitall()  # the engine idle: none of its locks is copied held
            seed = int(_janus.random_uniform(0.0, 2.0 ** 52, (1,)).item())
            self._pool = _mp.get_context("fork").Pool(
                self._workers, initializer=_worker_start,
                initargs=(self._ds, self._batchify_fn, seed))
        pending = _collections.deque()
        done = False
        try:
            for b, indices in enumerate(batches):
                pending.append((b, self._pool.apply_async(_worker_gather, (indices,))))
                if len(pending) >= self._prefetch:
                    yield self._receive(*pending.popleft())
            while pending:
                yield self._receive(*pending.popleft())
            done = True
        finally:  # an epoch left early leaves batches in work: end the workers
            if not done:
                self.close()

    def _receive(self, b, result):
        try:
            ok, payload = result.get(self._timeout)
        except _mp.TimeoutError:
            raise RuntimeError(f"DataLoader: batch {b} took a worker process more than "
                               f"{self._timeout} s (the DataLoader's timeout)") from None
        if not ok:
            raise _pickle.loads(payload)
        return _to_janus(payload)

    def close(self):
        """Ends the worker processes (the next epoch forks new ones)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 (at interpreter exit multiprocessing may be gone;
            pass           # its own exit handler ends the workers then)


def _sample_error(index, e):
    """``e`` with the sample's index in its message (its own type when that can be built from
    a message, else RuntimeError)."""
    msg = f"DataLoader: reading sample {index} failed: {type(e).__name__}: {e}"
    try:
        return type(e)(msg)
    except Exception:  # noqa: BLE001
        return RuntimeError(msg)


class _OneArraySamples:
    """A C++ dataset read from Python: a sample of one array is that array, not a 1-tuple (as
    MXNet's ArrayDataset of one array gives it)."""

    def __init__(self, base):
        self._base = base

    def __len__(self):
        return len(self._base)

    def __getitem__(self, i):
        sample = self._base[i]
        return sample[0] if isinstance(sample, tuple) and len(sample) == 1 else sample


class DataLoader:
    """Batches of a dataset: each iteration is one epoch (``shuffle`` draws a new order each
    epoch); a batch is ``(X, y)`` for datasets of two arrays. ``sampler`` (indices) or
    ``batch_sampler`` (lists of indices) set the order as in MXNet (gluon.data.sampler), and
    ``batchify_fn(samples)`` makes a batch from a list of samples. A C++ dataset (ArrayDataset,
    FashionMNIST, with ToTensor only) without these is batched by ``num_workers`` C++ threads;
    any other by ``num_workers`` worker processes, or threads with ``thread_pool=True`` (see
    _PyLoader); ``timeout`` bounds the seconds a worker process may take for one batch."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120, **kwargs):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers is {num_workers!r}, expected an int >= 0")
        prefetch = 2 * num_workers if prefetch is None else prefetch
        if not isinstance(prefetch, int) or prefetch < 0:
            raise ValueError(f"DataLoader: prefetch is {prefetch!r}, expected an int >= 0")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"DataLoader: timeout is {timeout!r}, expected seconds > 0")
        if batch_sampler is None:
            if batch_size is None or batch_size < 1:
                raise ValueError(f"DataLoader: batch_size is {batch_size}, expected a positive "
                                 "int")
            if sampler is not None and shuffle:
                raise ValueError("DataLoader: shuffle must not be given with a sampler (the "
                                 "sampler sets the order)")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("DataLoader: batch_size, shuffle, sampler and last_batch must not be "
                             "given with a batch_sampler (it makes the batches)")
        if (isinstance(dataset, _janus.Dataset) and sampler is None and batch_sampler is None
                and batchify_fn is None):
            self._loader = _janus.DataLoader(dataset, batch_size, shuffle, last_batch or "keep",
                                             num_workers)
            return
        if isinstance(dataset, _janus.Dataset):
            dataset = _OneArraySamples(dataset)
        if batch_sampler is None:
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else \
                    SequentialSampler(len(dataset))
            batch_sampler = BatchSampler(sampler, batch_size, last_batch or "keep")
        if batchify_fn is not None and not callable(batchify_fn):
            raise TypeError(f"DataLoader: batchify_fn {batchify_fn!r} is not callable")
        self._loader = _PyLoader(dataset, batch_sampler, batchify_fn, num_workers,
                                 max(prefetch, 1), thread_pool, timeout)

    def __iter__(self):
        return iter(self._loader)

    def __len__(self):
        return len(self._loader)
