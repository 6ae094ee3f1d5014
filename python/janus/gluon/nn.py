"""``gluon.nn``: blocks and layers. Layers are the C++ ones; a Python subclass of ``Block`` (or
``HybridBlock``) with ``forward(self, x, ...)`` is called by C++ through a trampoline, so that
``hybridize()`` traces the Python forward once per input signature and later calls run the
compiled graph without Python. Child blocks and ``Parameter``s assigned as attributes are
registered with the block (``collect_params``, ``initialize``, export).

Every block hybridizes (HybridBlock is Block); ``HybridSequential`` is ``Sequential``."""
import contextlib as _contextlib
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
Conv1D = _janus.Conv1D
Conv2D = _janus.Conv2D
Conv3D = _janus.Conv3D
Conv1DTranspose = _janus.Conv1DTranspose
Conv2DTranspose = _janus.Conv2DTranspose
Conv3DTranspose = _janus.Conv3DTranspose
MaxPool1D = _janus.MaxPool1D
MaxPool2D = _janus.MaxPool2D
MaxPool3D = _janus.MaxPool3D
AvgPool1D = _janus.AvgPool1D
AvgPool2D = _janus.AvgPool2D
AvgPool3D = _janus.AvgPool3D
GlobalMaxPool1D = _janus.GlobalMaxPool1D
GlobalMaxPool3D = _janus.GlobalMaxPool3D
GlobalAvgPool1D = _janus.GlobalAvgPool1D
GlobalAvgPool2D = _janus.GlobalAvgPool2D
GlobalAvgPool3D = _janus.GlobalAvgPool3D
ReflectionPad2D = _janus.ReflectionPad2D
SELU = _janus.SELU
BatchNorm = _janus.BatchNorm
BatchNormReLU = _janus.BatchNormReLU
SyncBatchNorm = _janus.SyncBatchNorm
Dropout = _janus.Dropout
Flatten = _janus.Flatten
Activation = _janus.Activation
Embedding = _janus.Embedding
LayerNorm = _janus.LayerNorm
GroupNorm = _janus.GroupNorm
InstanceNorm = _janus.InstanceNorm


class _ParamGetter:
    """MXNet 1.x's ``self.params.get('weight', shape=...)``: a Parameter that the assignment
    ``self.weight = ...`` registers."""

    def __init__(self, block):
        self._block = block

    def get(self, name, shape=None, init=None, dtype=None, grad_req="write", **kwargs):
        return Parameter(name, shape=shape, init=init, dtype=dtype, grad_req=grad_req)

    def get_constant(self, name, value=None):
        """A parameter holding ``value`` (an array, NumPy array or nested lists; float32 unless
        it is a Janus array of another dtype) that gets no gradient: MXNet's Constant."""
        if value is None:
            raise ValueError(f"get_constant: no value given for constant '{name}'")
        from .parameter import Constant
        return Constant(name, value)


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


def _name_scope(self):
    """MXNet 1.x's scope for the names of the parameters created inside it. Janus names
    parameters by the attributes that hold them, so there is nothing to scope: a context that
    does nothing, so that 1.x blocks (``with self.name_scope(): self.fc = nn.Dense(..)``) run."""
    return _contextlib.nullcontext()


Block.name_scope = _name_scope


def _F():
    from .. import numpy as np, numpy_extension as npx, ndarray as nd
    ns = {k: getattr(np, k) for k in dir(np) if not k.startswith("_")}
    ns.update({k: getattr(npx, k) for k in dir(npx) if not k.startswith("_")})
    # MXNet 1.9's F is mx.nd (mx.sym hybridized), numpy mode or not: its legacy operators win
    # where a name is in both (sum's exclude, reshape's codes, split's num_outputs, ...).
    ns.update({k: getattr(nd, k) for k in nd.__all__})
    ns.update(np=np, npx=npx, _internal=nd._internal, __getattr__=nd.__getattr__)
    # One namespace whether traced or not: Janus's arrays are the same type in both.
    F = _types.ModuleType("janus.F", "hybrid_forward's F: the legacy operators (janus.ndarray) "
                          "over the np and npx functions")
    F.__dict__.update(ns)
    return F


class HybridBlock(Block):
    """A Block; also runs MXNet 1.x's ``hybrid_forward(self, F, x, ..., **params)`` when the
    subclass defines that instead of ``forward`` (F: MXNet 1.x's legacy operators, janus.ndarray,
    over the np and npx functions)."""

    _F = None

    def forward(self, *args):
        return _call_hybrid_forward(self, args)


def _call_hybrid_forward(block, args):
    """``block.hybrid_forward(F, *args, **params)``, the params being the Parameters assigned
    to the block's attributes, by name, on the device of ``args[0]`` (HybridBlock and
    HybridRecurrentCell)."""
    hybrid_forward = getattr(block, "hybrid_forward", None)
    if hybrid_forward is None:
        raise NotImplementedError(f"{type(block).__name__}: defines neither forward nor "
                                  "hybrid_forward")
    if HybridBlock._F is None:
        HybridBlock._F = _F()
    ctx = args[0].ctx
    params = {name: p.data(ctx) for name, p in vars(block).items() if isinstance(p, Parameter)}
    return hybrid_forward(HybridBlock._F, *args, **params)


# Layers composed in Python from the operators (each a HybridBlock: hybridize traces it).

class HybridLambda(HybridBlock):
    """A block running ``function(x, ...)``: a callable on arrays, or the name of an np / npx
    function ("relu", "tanh", ...)."""

    def __init__(self, function, prefix=None):
        super().__init__()
        if isinstance(function, str):
            from .. import numpy as np, numpy_extension as npx
            fn = getattr(npx, function, None) or getattr(np, function, None)
            if fn is None:
                raise ValueError(f"HybridLambda: '{function}' is not an np or npx function")
            function = fn
        if not callable(function):
            raise TypeError(f"HybridLambda: expected a callable or a function name, got "
                            f"{type(function).__name__}")
        self._function = function

    def forward(self, *args):
        return self._function(*args)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self._function, '__name__', self._function)})"


Lambda = HybridLambda


class Identity(HybridBlock):
    """Its input, unchanged."""

    def forward(self, x):
        return x


class LeakyReLU(HybridBlock):
    """x for x > 0, alpha * x otherwise."""

    def __init__(self, alpha, **kwargs):
        super().__init__()
        if alpha < 0:
            raise ValueError(f"LeakyReLU: alpha must be >= 0, got {alpha}")
        self._alpha = float(alpha)

    def forward(self, x):
        return _janus.leaky_relu(x, self._alpha)


class PReLU(HybridBlock):
    """LeakyReLU whose slope ``alpha`` is learned (one per channel of axis 1 with
    ``in_channels`` > 1, else one)."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__()
        from .. import initializer
        self._in_channels = in_channels
        self.alpha = Parameter("alpha", shape=(in_channels,),
                               init=alpha_initializer or initializer.Constant(0.25))

    def forward(self, x):
        alpha = self.alpha.data(x.ctx)
        if self._in_channels > 1:
            alpha = alpha.reshape((1, self._in_channels) + (1,) * (x.ndim - 2))
        return _janus.relu(x) - alpha * _janus.relu(-x)


class ELU(HybridBlock):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__()
        self._alpha = float(alpha)

    def forward(self, x):
        return _janus.relu(x) + self._alpha * (_janus.exp(-_janus.relu(-x)) - 1)


class GELU(HybridBlock):
    """x * Phi(x) (the exact form, through erf)."""

    def forward(self, x):
        return _janus.gelu(x)


class Swish(HybridBlock):
    """x * sigmoid(beta * x)."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__()
        self._beta = float(beta)

    def forward(self, x):
        return x * _janus.sigmoid(x * self._beta) if self._beta != 1.0 else x * _janus.sigmoid(x)


class SiLU(Swish):
    """x * sigmoid(x)."""

    def __init__(self, **kwargs):
        super().__init__(1.0)


class GlobalMaxPool2D(HybridBlock):
    """The maximum of each channel over its H x W plane: shape [N, C, 1, 1] (NCHW) or
    [N, 1, 1, C] (NHWC)."""

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__()
        if layout not in ("NCHW", "NHWC"):
            raise ValueError(f"GlobalMaxPool2D: layout '{layout}' is not supported, expected "
                             "'NCHW' or 'NHWC'")
        self._layout = layout

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"GlobalMaxPool2D: expected an {self._layout} input (4 axes), got "
                             f"shape {x.shape}")
        return _janus.max(x, [1, 2] if self._layout == "NHWC" else [2, 3], True)
