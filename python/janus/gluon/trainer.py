"""``gluon.Trainer``: the C++ Trainer, built from MXNet's arguments."""
from .. import _janus
from ..kvstore import KVStore as _KVStore
from ..optimizer import Optimizer as _Optimizer


class Trainer(_janus.Trainer):
    """``Trainer(params, optimizer, optimizer_params, kvstore, update_on_kvstore)``: the
    optimizer is a name ("sgd", "adam") with ``optimizer_params``, or an ``mx.optimizer``
    object; the kvstore a name ("device", "local", "dist_sync", ...) or an ``mx.kv`` store,
    which the trainer then uses."""

    def __init__(self, params, optimizer="sgd", optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(optimizer, _Optimizer):
            optimizer_params = {**optimizer.params, **(optimizer_params or {})}
            optimizer = optimizer.name
        if isinstance(kvstore, _KVStore):
            kvstore = kvstore._store  # the same store: its keys and optimizer are shared
        super().__init__(params, optimizer, optimizer_params, kvstore, update_on_kvstore)
