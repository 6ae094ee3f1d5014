"""``gluon.data.sampler``: MXNet's samplers, the order of a DataLoader's samples. A sampler
iterates over sample indices (``Sampler``); a batch sampler over lists of them
(``BatchSampler``). Random orders come from Janus's generator (``mx.random.seed``)."""
import numpy as _onp

from ... import _janus


class Sampler:
    """The base class: ``__iter__`` gives indices, ``__len__`` their number."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: __iter__ is not defined")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__}: __len__ is not defined")


def _check_length(name, length):
    if not isinstance(length, (int, _onp.integer)) or length < 0:
        raise ValueError(f"{name}: length is {length!r}, expected an int >= 0")
    return int(length)


class SequentialSampler(Sampler):
    """start, start + 1, ..., start + length - 1."""

    def __init__(self, length, start=0):
        self._length, self._start = _check_length("SequentialSampler", length), int(start)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """0 .. length - 1 in a new random order each pass."""

    def __init__(self, length):
        self._length = _check_length("RandomSampler", length)

    def __iter__(self):
        if self._length <= 1:
            return iter(range(self._length))
        keys = _janus.random_uniform(0.0, 1.0, (self._length,)).asnumpy()
        return iter(_onp.argsort(keys, kind="stable").tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices i of ``dataset`` whose sample satisfies ``fn(sample)``, in order."""

    def __init__(self, fn, dataset):
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last, shorter list is kept
    (``keep``), dropped (``discard``) or carried to the front of the next pass
    (``rollover``)."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if not isinstance(batch_size, (int, _onp.integer)) or batch_size < 1:
            raise ValueError(f"BatchSampler: batch_size is {batch_size!r}, expected an int >= 1")
        if last_batch not in ("keep", "discard", "rollover"):
            raise ValueError(f"BatchSampler: last_batch is {last_batch!r}, expected 'keep', "
                             "'discard' or 'rollover'")
        self._sampler, self._size, self._last = sampler, int(batch_size), last_batch
        self._carried = []

    def __iter__(self):
        batch, self._carried = self._carried, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._size:
                yield batch
                batch = []
        if batch:
            if self._last == "keep":
                yield batch
            elif self._last == "rollover":
                self._carried = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last == "keep":
            return -(-n // self._size)
        if self._last == "discard":
            return n // self._size
        return (n + len(self._carried)) // self._size
