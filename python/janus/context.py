"""Devices (MXNet's ``mx.context``): ``cpu(i)`` are logical CPU devices that split the machine's
cores; they are added on first use, so ``cpu(i)`` works for any ``i`` below 64 with no set-up.
``gpu(i)`` raises ``DeviceError``: this build of Janus has no GPU backend."""
from . import _janus

Context = _janus.Context
Device = _janus.Context


def cpu(device_id=0):
    return _janus.cpu(device_id)


def gpu(device_id=0):
    return _janus.gpu(device_id)


def num_gpus():
    """GPUs Janus can use: none, as Janus has no GPU kernels yet (even where CUDA sees devices)."""
    return 0


def current_context():
    """The device that creation functions use when given none (``with mx.cpu(1):`` sets it)."""
    return _janus.current_device()


current_device = current_context
