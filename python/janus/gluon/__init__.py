"""``gluon``: blocks, layers, losses, the Trainer and data loading (MXNet's names)."""
from .. import _janus
from . import nn, loss, data, utils, rnn, metric, contrib, model_zoo  # noqa: F401
from .parameter import Constant, Parameter, ParameterDict  # noqa: F401

from .trainer import Trainer  # noqa: E402
Block = nn.Block
HybridBlock = nn.HybridBlock
SymbolBlock = nn.SymbolBlock
