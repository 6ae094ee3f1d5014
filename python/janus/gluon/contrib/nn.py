"""``gluon.contrib.nn``: MXNet 1.9's contributed layers. Concurrent, HybridConcurrent and
Identity are ``gluon.nn``'s; PixelShuffle1D/2D/3D and SyncBatchNorm are C++ layers;
SparseEmbedding is Embedding (see its docstring)."""
from ... import _janus
from .. import nn as _nn

Concurrent = _nn.Concurrent
HybridConcurrent = _nn.HybridConcurrent
Identity = _nn.Identity
PixelShuffle1D = _janus.PixelShuffle1D
PixelShuffle2D = _janus.PixelShuffle2D
PixelShuffle3D = _janus.PixelShuffle3D
SyncBatchNorm = _janus.SyncBatchNorm


class SparseEmbedding(_nn.Embedding):
    """MXNet's contrib SparseEmbedding(input_dim, output_dim, dtype, weight_initializer): rows of
    weight [input_dim, output_dim] picked by integer indices. Janus has no sparse storage, so
    the weight and its gradient are DENSE: the gradient is a full [input_dim, output_dim] array,
    zero outside the rows looked up, where MXNet gives a row_sparse array holding those rows
    only. The numbers (forward, gradient, an optimizer step on it) are those of
    ``gluon.nn.Embedding``; memory and time per step grow with input_dim, and MXNet's lazy
    updates of optimizers (which skip the rows not looked up, for example in Adam's moments)
    do not happen."""
