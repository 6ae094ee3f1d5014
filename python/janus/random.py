"""``mx.random``: the global seed and MXNet's legacy sampling functions."""
from . import _janus
from .numpy.random import normal, uniform, randint  # noqa: F401


def seed(seed_state, ctx="all"):
    """Seeds every random operator: after the same seed, a program draws the same numbers
    (counter-based Philox streams, independent of thread scheduling)."""
    _janus.seed(int(seed_state))
