"""``gluon.contrib.rnn``: MXNet 1.9's contributed recurrent cells, VariationalDropoutCell and
LSTMPCell (the same classes as ``gluon.rnn``'s; see there). The convolutional cells
(Conv1DRNNCell, ...) are not in Janus."""
from ..rnn import LSTMPCell, VariationalDropoutCell  # noqa: F401

_NOT_YET = tuple(f"Conv{d}D{kind}Cell" for d in (1, 2, 3) for kind in ("RNN", "LSTM", "GRU"))


def __getattr__(name):
    if name in _NOT_YET:
        from ...base import NotSupportedError
        raise NotSupportedError(f"gluon.contrib.rnn.{name}: Janus does not have the "
                                "convolutional recurrent cells (it has VariationalDropoutCell "
                                "and LSTMPCell)")
    raise AttributeError(f"module 'janus.gluon.contrib.rnn' has no attribute '{name}'")
