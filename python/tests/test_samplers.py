"""gluon.data's samplers and DataLoader(sampler=, batch_sampler=, batchify_fn=), as MXNet 1.9:
orders, last_batch keep/discard/rollover, batchify_fn in the loop's thread and in worker
processes, and the argument errors."""
import numpy as onp
import pytest

import janus as mx
from janus import gluon
from janus.gluon.data import (BatchSampler, FilterSampler, RandomSampler, SequentialSampler,
                              sampler)


def test_sequential_random_and_filter_samplers():
    assert list(SequentialSampler(4)) == [0, 1, 2, 3] and len(SequentialSampler(4)) == 4
    assert list(SequentialSampler(3, start=5)) == [5, 6, 7]
    mx.random.seed(3)
    a = list(RandomSampler(10))
    mx.random.seed(3)
    assert list(RandomSampler(10)) == a and sorted(a) == list(range(10)) and a != list(range(10))
    assert list(FilterSampler(lambda s: s % 3 == 0, list(range(10)))) == [0, 3, 6, 9]
    assert sampler.Sampler is gluon.data.Sampler


def test_batch_sampler_last_batch():
    seq = SequentialSampler(7)
    assert list(BatchSampler(seq, 3, "keep")) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(seq, 3, "discard")) == [[0, 1, 2], [3, 4, 5]]
    roll = BatchSampler(seq, 3, "rollover")
    assert len(roll) == 2 and list(roll) == [[0, 1, 2], [3, 4, 5]]
    assert len(roll) == 2 + 0 and list(roll) == [[6, 0, 1], [2, 3, 4]]  # 6 carried over
    assert list(roll) == [[5, 6, 0], [1, 2, 3], [4, 5, 6]]


class Pairs:
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return onp.full((2,), i, onp.float32), i


def pad_batchify(samples):
    """A user's batchify_fn: the data stacked, the labels as a Python list, a count."""
    data = mx.np.array(onp.stack([s[0] for s in samples]))
    return data, [s[1] for s in samples], len(samples)


@pytest.mark.parametrize("workers", [0, 2])
def test_loader_takes_samplers_and_batchify_fn(workers):
    loader = gluon.data.DataLoader(Pairs(), batch_sampler=BatchSampler(
        SequentialSampler(6, start=0), 4, "keep"), batchify_fn=pad_batchify,
        num_workers=workers)
    got = list(loader)
    assert len(loader) == 2 and len(got) == 2
    data, labels, count = got[1]
    assert isinstance(data, mx.np.ndarray) and data.asnumpy().tolist() == [[4, 4], [5, 5]]
    assert labels == [4, 5] and count == 2
    rev = gluon.data.DataLoader(Pairs(), 4, sampler=list(reversed(range(6))),
                                last_batch="discard", num_workers=workers)
    [(x, y)] = list(rev)
    assert y.asnumpy().tolist() == [5, 4, 3, 2]
    # A C++ dataset with a sampler goes the Python way.
    ds = gluon.data.ArrayDataset(onp.arange(6, dtype=onp.float32))
    assert [b.asnumpy().tolist() for b in gluon.data.DataLoader(
        ds, 2, sampler=SequentialSampler(3, start=3), num_workers=workers)] == [[3, 4], [5]]


def test_sampler_argument_errors():
    with pytest.raises(ValueError, match=r"DataLoader: shuffle must not be given with a sampler"):
        gluon.data.DataLoader(Pairs(), 2, shuffle=True, sampler=SequentialSampler(6))
    with pytest.raises(ValueError, match=r"batch_size, shuffle, sampler and last_batch must not "
                                         r"be given with a batch_sampler"):
        gluon.data.DataLoader(Pairs(), 2, batch_sampler=BatchSampler(SequentialSampler(6), 2))
    with pytest.raises(ValueError, match=r"BatchSampler: last_batch is 'all', expected 'keep', "
                                         r"'discard' or 'rollover'"):
        BatchSampler(SequentialSampler(6), 2, "all")
    with pytest.raises(ValueError, match=r"BatchSampler: batch_size is 0, expected an int >= 1"):
        BatchSampler(SequentialSampler(6), 0)
    with pytest.raises(ValueError, match=r"RandomSampler: length is -1, expected an int >= 0"):
        RandomSampler(-1)
    with pytest.raises(TypeError, match=r"DataLoader: batchify_fn 3 is not callable"):
        gluon.data.DataLoader(Pairs(), 2, batchify_fn=3)
