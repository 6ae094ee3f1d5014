"""``gluon.nn``: blocks and layers. Layers are the C++ ones; a Python subclass of ``Block`` (or
``HybridBlock``) with ``forward(self, x, ...)`` is called by C++ through a trampoline, so that
``hybridize()`` traces the Python forward once per input signature and later calls run the
compiled graph without Python. Child blocks and ``Parameter``s assigned as attributes are
registered with the block (``collect_params``, ``initialize``, export).

Every block hybridizes (HybridBlock is Block); ``HybridSequential`` is ``Sequential``."""
import os as _os
import types as _types

from .. import _janus
from .parameter import Parameter

Block = _janus.Block
Sequential = _janus.Sequential
HybridSequential = _janus.Sequential
Concurrent = _janus.Concurrent
HybridConcurrent = _janus.Concurrent
SymbolBlock = _janus.SymbolBlock
Dense = _janus.Dense
Conv2D = _janus.Conv2D
MaxPool2D = _janus.MaxPool2D
AvgPool2D = _janus.AvgPool2D
GlobalAvgPool2D = _janus.GlobalAvgPool2D
BatchNorm = _janus.BatchNorm
Dropout = _janus.Dropout
Flatten = _janus.Flatten
Activation = _janus.Activation
Embedding = _janus.Embedding
LayerNorm = _janus.LayerNorm


class _ParamGetter:
    """MXNet 1.x's ``self.params.get('weight', shape=...)``: a Parameter that the assignment
    ``self.weight = ...`` registers."""

    def __init__(self, block):
        self._block = block

    def get(self, name, shape=None, init=None, dtype=None, grad_req="write", **kwargs):
        return Parameter(name, shape=shape, init=init, dtype=dtype, grad_req=grad_req)


Block.params = property(lambda self: _ParamGetter(self))

_export_model = Block.export


def _export(self, path, epoch=0, remove_amp_cast=True):
    """Writes ``path-symbol.json`` (the graph of the last hybridized call) and
    ``path-NNNN.params`` (its parameters; NNNN = epoch), MXNet's file names; returns both names.
    The parameters are in the safetensors format, which every Janus loader recognises by its
    content whatever the file's name. TraceError before a hybridized call."""
    _export_model(self, path, epoch)
    written = f"{path}-{epoch:04d}.safetensors"
    params = f"{path}-{epoch:04d}.params"
    _os.replace(written, params)
    return f"{path}-symbol.json", params


Block.export = _export


def _F():
    from .. import numpy as np, numpy_extension as npx
    ns = {k: getattr(np, k) for k in dir(np) if not k.startswith("_")}
    ns.update({k: getattr(npx, k) for k in dir(npx) if not k.startswith("_")})
    ns.update(np=np, npx=npx)
    # One namespace whether traced or not: Janus's arrays are the same type in both.
    F = _types.ModuleType("janus.F", "hybrid_forward's F: the np and npx functions")
    F.__dict__.update(ns)
    return F


class HybridBlock(Block):
    """A Block; also runs MXNet 1.x's ``hybrid_forward(self, F, x, ..., **params)`` when the
    subclass defines that instead of ``forward`` (F holds the np and npx functions)."""

    _F = None

    def forward(self, *args):
        hybrid_forward = getattr(self, "hybrid_forward", None)
        if hybrid_forward is None:
            raise NotImplementedError(f"{type(self).__name__}: defines neither forward nor "
                                      "hybrid_forward")
        if HybridBlock._F is None:
            HybridBlock._F = _F()
        ctx = args[0].ctx
        params = {name: p.data(ctx) for name, p in vars(self).items()
                  if isinstance(p, Parameter)}
        return hybrid_forward(HybridBlock._F, *args, **params)
