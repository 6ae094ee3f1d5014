"""``gluon.contrib``: MXNet 1.9's contributed blocks (``contrib.nn``)."""
from . import nn  # noqa: F401
