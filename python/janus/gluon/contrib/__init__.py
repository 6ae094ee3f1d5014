"""``gluon.contrib``: MXNet 1.9's contributed blocks (``contrib.nn``, ``contrib.rnn``)."""
from . import nn, rnn  # noqa: F401
