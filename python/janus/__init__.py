"""Janus: a deep learning framework with Apache MXNet 1.9's numpy-style Gluon API.

Every array, operator, block and graph lives in the C++ core (the extension module
``janus._janus``); this package gives it MXNet's names, so that MXNet and d2l code runs with only
its import changed::

    from janus import np, npx, autograd, gluon, init
    import janus as mx
"""
# The build tree keeps the extension module in another folder than these sources (both on
# PYTHONPATH in the tests): let `janus` span both.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from . import _janus
from .base import MXNetError, JanusError  # noqa: F401  (sets up the error translation)
from . import context
from .context import Context, cpu, gpu, num_gpus, current_context  # noqa: F401
from . import numpy as np
from . import numpy_extension as npx
from . import autograd
from . import initializer
from . import initializer as init
from . import random
from . import optimizer
from . import kvstore
from . import kvstore as kv
from . import gluon
from .gluon import metric  # noqa: E402  (MXNet 1.x: mx.metric)
from .numpy import waitall  # noqa: F401

from . import ndarray
from . import ndarray as nd  # MXNet 1.x: mx.nd, the legacy operators

__version__ = "0.1.0"

__all__ = ["np", "npx", "autograd", "gluon", "init", "initializer", "random", "context", "cpu",
           "kv", "kvstore", "optimizer",
           "gpu", "num_gpus", "current_context", "Context", "MXNetError", "JanusError"]
