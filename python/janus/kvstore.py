"""Key-value stores (MXNet's ``mx.kv``): ``create('local' | 'device' | 'dist_sync' | ...)``
gives a store through which arrays on several devices (or processes) are summed and shared::

    kv = mx.kv.create('local')
    kv.init(3, np.zeros((2, 3)))
    kv.push(3, [g0, g1])          # g0 on cpu(0), g1 on cpu(1): their sum becomes the value
    kv.pull(3, out=[w0, w1])      # the value copied into both
    kv.pushpull(3, [g0, g1])      # an allreduce, in place

A key is an int or a str, or a list of them with a list of values (one per key, each an array
or a list of arrays, one per device). Every call pushes engine operations and returns."""
from . import _janus
from .numpy import ndarray as _ndarray
from .optimizer import Optimizer as _Optimizer


def _pairs(key, value, what):
    """[(key, [arrays])] from one key or a list of keys and the matching values."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
            raise ValueError(f"kvstore.{what}: {len(key)} keys need a list of {len(key)} values, "
                             f"got {got}")
        return [(k, _arrays(v, what, k)) for k, v in zip(key, value)]
    return [(key, _arrays(value, what, key))]


def _arrays(value, what, key):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if not isinstance(v, _ndarray):
            raise TypeError(f"kvstore.{what}: key {key!r} needs ndarrays, got "
                            f"{type(v).__name__}")
    if not values:
        raise ValueError(f"kvstore.{what}: key {key!r} got an empty list of arrays")
    return values


class KVStore:
    """A store (see the module); ``type``, ``rank`` and ``num_workers`` as in MXNet."""

    def __init__(self, store):
        self._store = store

    @property
    def type(self):
        return self._store.type

    @property
    def rank(self):
        return self._store.rank

    @property
    def num_workers(self):
        return self._store.num_workers

    def init(self, key, value):
        for k, vs in _pairs(key, value, "init"):
            if len(vs) != 1:
                raise ValueError(f"kvstore.init: key {k!r} takes one array, got {len(vs)}")
            self._store._init(k, vs[0])

    def push(self, key, value, priority=0):
        for k, vs in _pairs(key, value, "push"):
            self._store._push(k, vs, priority)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        if out is None:
            raise ValueError("kvstore.pull: out (the arrays to copy the value into) is required")
        for k, outs in _pairs(key, out, "pull"):
            self._store._pull(k, outs, priority)

    def pushpull(self, key, value, out=None, priority=0):
        """Push then pull; without an optimizer an allreduce: ``out`` (``value`` itself when
        None) receives the sum of ``value`` and the stored value stays."""
        values = _pairs(key, value, "pushpull")
        outs = values if out is None else _pairs(key, out, "pushpull")
        for (k, vs), (_, os_) in zip(values, outs):
            self._store._pushpull(k, vs, os_, priority)

    def broadcast(self, key, value, out, priority=0):
        """init(key, value), then pull(key, out)."""
        values = _pairs(key, value, "broadcast")
        outs = _pairs(key, out, "broadcast")
        for (k, vs), (_, os_) in zip(values, outs):
            if len(vs) != 1:
                raise ValueError(f"kvstore.broadcast: key {k!r} takes one value, got {len(vs)}")
            self._store._broadcast(k, vs[0], os_, priority)

    def set_optimizer(self, optimizer):
        """Each push then updates the stored value with ``optimizer`` (an ``mx.optimizer``
        object; None removes it) taking the pushed sum as the gradient."""
        if optimizer is None:
            self._store._set_optimizer(None, None)
            return
        if not isinstance(optimizer, _Optimizer):
            raise TypeError(f"kvstore.set_optimizer: expected an mx.optimizer object, got "
                            f"{type(optimizer).__name__}")
        self._store._set_optimizer(optimizer.name, optimizer.params)

    def __repr__(self):
        return f"<KVStore {self.type}>"


def create(name="local"):
    """The store called ``name`` (``kinds()`` lists them); ValueError naming the known ones."""
    if not isinstance(name, str):
        raise TypeError(f"kvstore.create: name must be a str, got {type(name).__name__}")
    return KVStore(_janus.kv_create(name))


def kinds():
    return _janus.kv_kinds()
