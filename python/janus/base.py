"""Janus's errors as Python exceptions. Every error that the C++ core raises arrives as
``MXNetError`` (named as in Apache MXNet, a ``RuntimeError``) or one of its subclasses below,
each also deriving from the built-in exception it matches, with the C++ message unchanged."""
from . import _janus


class MXNetError(RuntimeError):
    """Base of every error raised by Janus (MXNet's name for it)."""


JanusError = MXNetError


class ShapeError(MXNetError, ValueError):
    """Shapes that do not fit together."""


class DTypeError(MXNetError, TypeError):
    """A wrong or unsupported dtype."""


class ArgumentError(MXNetError, ValueError):
    """A bad argument value."""


class OutOfRangeError(MXNetError, IndexError):
    """An index or axis out of range."""


class DeviceError(MXNetError):
    """A wrong, unknown or unavailable device (e.g. a GPU in a build without CUDA)."""


class NotSupportedError(MXNetError, NotImplementedError):
    """A valid request that Janus cannot do (yet)."""


class FileError(MXNetError, OSError):
    """A file that cannot be opened or read."""


class FormatError(MXNetError, ValueError):
    """A file whose contents are malformed."""


class TraceError(MXNetError):
    """A hybridized block's forward did something that tracing cannot (read a value)."""


class EngineError(MXNetError):
    """Misuse of the engine."""


class InternalError(MXNetError):
    """A bug in Janus: please report it."""


_janus._set_error_types({
    "MXNetError": MXNetError, "ShapeError": ShapeError, "DTypeError": DTypeError,
    "ValueError": ArgumentError, "IndexError": OutOfRangeError, "DeviceError": DeviceError,
    "NotImplementedError": NotSupportedError, "IOError": FileError, "FormatError": FormatError,
    "TraceError": TraceError, "EngineError": EngineError, "InternalError": InternalError,
})
