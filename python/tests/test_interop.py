"""NumPy and PyTorch interop: the buffer protocol, DLPack both ways, __array__."""
import numpy as onp
import pytest

import janus as mx
from janus import np, npx


def test_buffer_protocol_shares_memory_after_pending_work():
    x = np.arange(6.0).reshape(2, 3) * 2  # pushed, maybe not yet run
    view = onp.asarray(x)  # the buffer protocol waits for it, then shares the memory
    assert view.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert view.dtype == onp.float32 and view.flags["C_CONTIGUOUS"]
    view[0, 0] = 42.0  # a write through the view is the array's own element
    assert x[0, 0].item() == 42.0
    m = memoryview(np.array([1, 2, 3], dtype="int64"))
    assert m.format == "l" or m.format == "q"
    assert m.tolist() == [1, 2, 3]


def test_buffer_of_a_row_view_and_of_every_numpy_dtype():
    x = np.arange(12.0).reshape(3, 4)
    assert onp.asarray(x[1]).tolist() == [4.0, 5.0, 6.0, 7.0]
    for dt in ["float32", "float64", "int32", "int64", "uint8", "bool"]:
        a = np.ones((2,), dtype=dt)
        assert onp.asarray(a).dtype == onp.dtype(dt)


def test_numpy_array_copies():
    x = np.ones((2,))
    host = onp.array(x)
    host[0] = 5.0
    assert x.asnumpy().tolist() == [1.0, 1.0]


def test_dlpack_to_and_from_numpy():
    x = np.arange(4.0) + 1
    y = onp.from_dlpack(x)  # zero copy
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0]
    x[3] = -1.0  # NumPy marks DLPack imports read-only: write through Janus, then wait
    x.wait_to_read()
    assert y[3] == -1.0  # the same memory
    assert x.__dlpack_device__() == (1, 0)
    z = np.from_dlpack(onp.arange(3, dtype=onp.int32))
    assert isinstance(z, np.ndarray) and z.dtype == onp.int32 and z.tolist() == [0, 1, 2]


def test_dlpack_with_pytorch():
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3)
    t = torch.utils.dlpack.from_dlpack(x)
    assert t.shape == (2, 3) and t.dtype == torch.float32
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    t[1, 2] = 9.0  # the same memory
    assert x[1, 2].item() == 9.0
    back = np.from_dlpack(torch.arange(4, dtype=torch.float64))
    assert back.dtype == onp.float64 and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    del x
    npx.waitall()
    assert t.sum().item() == 0 + 1 + 2 + 3 + 4 + 9  # the capsule kept the memory alive


def test_interop_errors_are_named():
    with pytest.raises(TypeError, match="does not export DLPack"):
        np.from_dlpack([1, 2, 3])
    with pytest.raises(BufferError, match="no streams"):
        np.ones((2,)).__dlpack__(stream=1)
