"""np.from_dlpack without a copy: the Janus array is the producer's memory (writes seen both
ways), the producer stays alive until the last handle and pending work are done; layouts that
are not row-major compact are copied."""
import gc
import time
import weakref

import numpy as onp
import pytest

from janus import np, npx


def address(a):
    return onp.asarray(a).__array_interface__["data"][0]


def released(ref):
    """Whether the weakly referenced producer is gone, letting queued releases run (they run as
    pending calls on this thread, between bytecodes)."""
    gc.collect()
    for _ in range(500):
        if ref() is None:
            return True
        time.sleep(0.002)
    return False


def test_numpy_import_shares_memory_both_ways():
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    j = np.from_dlpack(a)
    assert j.shape == (2, 3) and j.dtype == onp.float32
    assert address(j) == a.__array_interface__["data"][0]  # no copy
    a[0, 0] = 42.0  # NumPy writes, Janus reads
    assert j[0, 0].item() == 42.0
    j[1, 1] = -5.0  # Janus writes, NumPy reads after the wait
    j.wait_to_read()
    assert a[1, 1] == -5.0
    assert (j * 2).asnumpy().tolist() == [[84.0, 2.0, 4.0], [6.0, -10.0, 10.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_every_supported_dtype_is_shared(dtype):
    a = (onp.arange(4) % 2).astype(dtype)
    j = np.from_dlpack(a)
    assert j.dtype == onp.dtype(dtype) and address(j) == a.__array_interface__["data"][0]
    assert j.asnumpy().tolist() == a.tolist()


def test_the_producer_lives_until_the_last_handle_and_pending_work():
    a = onp.arange(1 << 16, dtype=onp.float32)
    ref = weakref.ref(a)
    j = np.from_dlpack(a)
    view = j.reshape((256, 256))  # a view keeps the storage too
    assert address(view) == address(j)
    total = j.sum()  # pushed on the array, maybe not yet run
    del a, j
    gc.collect()
    assert ref() is not None
    assert view[0, 10:20].asnumpy().tolist() == [float(i) for i in range(10, 20)]
    del view
    assert total.item() == float(sum(range(1 << 16)))
    npx.waitall()
    assert released(ref)


def test_transposed_and_strided_layouts_are_copied():
    a = onp.arange(12, dtype=onp.float32).reshape(3, 4)
    t = np.from_dlpack(a.T)
    assert t.asnumpy().tolist() == a.T.tolist()
    assert address(t) != a.__array_interface__["data"][0]
    s = np.from_dlpack(a[:, ::2])
    assert s.asnumpy().tolist() == a[:, ::2].tolist()
    row = np.from_dlpack(a[1:2])  # a compact slice with an offset is shared
    assert address(row) == a[1:2].__array_interface__["data"][0]


def test_pytorch_import_shares_memory_both_ways_and_keeps_it_alive():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    j = np.from_dlpack(t)
    assert address(j) == t.data_ptr()
    t[0, 1] = 7.0
    assert j[0, 1].item() == 7.0
    j[1, 0] = -1.0
    j.wait_to_read()
    assert t[1, 0].item() == -1.0
    del t
    gc.collect()
    assert j.asnumpy().tolist() == [[0.0, 7.0, 2.0], [-1.0, 4.0, 5.0]]
    for dt, want in [(torch.int64, onp.int64), (torch.uint8, onp.uint8), (torch.float64,
                                                                         onp.float64)]:
        x = torch.ones(3, dtype=dt)
        assert np.from_dlpack(x).dtype == want and address(np.from_dlpack(x)) == x.data_ptr()
    tt = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # not compact: copied
    assert np.from_dlpack(tt).asnumpy().tolist() == tt.tolist()


def test_dlpack_import_errors_are_named():
    capsule = onp.arange(3.0).__dlpack__()
    np.from_dlpack(capsule)
    with pytest.raises(ValueError, match="named 'used_dltensor', expected 'dltensor'"):
        np.from_dlpack(capsule)
    with pytest.raises(TypeError, match="from_dlpack: DLPack dtype code 5"):
        np.from_dlpack(onp.ones(2, dtype=onp.complex64))
