"""``gluon.rnn``: recurrent layers. Janus has none yet (no recurrent operators in the C++ core):
the module imports, as MXNet code imports it alongside ``nn``, and naming any of its layers
raises NotSupportedError saying so."""
from ..base import NotSupportedError

_LAYERS = ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "BidirectionalCell", "DropoutCell", "ResidualCell",
           "ZoneoutCell", "HybridRecurrentCell", "RecurrentCell")


def __getattr__(name):
    if name in _LAYERS:
        raise NotSupportedError(f"gluon.rnn.{name}: Janus has no recurrent layers yet")
    raise AttributeError(f"module 'janus.gluon.rnn' has no attribute '{name}'")
