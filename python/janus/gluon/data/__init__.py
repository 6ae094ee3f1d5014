"""``gluon.data``: datasets and the DataLoader, both in C++ (batches are gathered by C++ worker
threads, never under the GIL)."""
from ... import _janus
from . import vision  # noqa: F401

Dataset = _janus.Dataset


def ArrayDataset(*arrays):
    """Samples i of each array (their first axis indexes the samples)."""
    from ... import numpy as np
    return _janus.ArrayDataset(*[a if isinstance(a, np.ndarray) else np.array(a) for a in arrays])


def _transform_first(self, fn, lazy=True):
    # The C++ datasets already give float32 [C, H, W] images in [0, 1] (what ToTensor makes of
    # MXNet's uint8 [H, W, C]), so ToTensor (alone or in a Compose) is the identity here.
    if vision.transforms._is_to_tensor(fn):
        return self
    raise NotImplementedError("transform_first: only transforms.ToTensor() is supported yet")


Dataset.transform_first = _transform_first
Dataset.transform = _transform_first


class DataLoader:
    """Batches of a dataset: each iteration is one epoch (``shuffle`` draws a new order each
    epoch); a batch is ``(X, y)`` for datasets of two arrays."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, **kwargs):
        if sampler is not None or batch_sampler is not None or batchify_fn is not None:
            raise NotImplementedError("DataLoader: samplers and batchify_fn are not supported")
        self._loader = _janus.DataLoader(dataset, batch_size or 1, shuffle,
                                         last_batch or "keep", num_workers)

    def __iter__(self):
        return iter(self._loader)

    def __len__(self):
        return len(self._loader)
