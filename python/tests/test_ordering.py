"""np.sort, np.argsort, np.unique, np.searchsorted, npx.topk and the legacy nd.sort, nd.argsort
and nd.topk: against NumPy and MXNet 1.9.1's numbers; gradients against finite differences;
a hybridized block equals its imperative calls and exports; bad arguments are named."""
import numpy as onp
import pytest

from janus import autograd, base, gluon, nd, np, npx
from janus.gluon import nn

from finite_differences import numeric_grad

NAN = onp.nan
RNG = onp.random.RandomState(5)
# Ties (small integers), NaNs and several axes.
TIES = RNG.randint(0, 4, size=(3, 4, 5)).astype(onp.float64)
WITH_NAN = onp.array([[2.0, NAN, -1.0, NAN, 0.0, 2.0], [NAN, 3.0, 3.0, -5.0, NAN, 1.0]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort_equal_numpys_stable_sort(dtype, axis):
    x = TIES.astype(dtype)
    a = np.array(x, dtype=dtype)
    got = np.sort(a, axis=axis)
    assert got.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(got.asnumpy(), onp.sort(x, axis=axis))
    idx = np.argsort(a, axis=axis)
    assert idx.dtype == onp.int64  # MXNet's numpy mode
    onp.testing.assert_array_equal(idx.asnumpy(), onp.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("axis", [0, 1])
def test_nan_sorts_last_as_in_numpy(axis):
    a = np.array(WITH_NAN, dtype="float64")
    onp.testing.assert_array_equal(np.sort(a, axis=axis).asnumpy(), onp.sort(WITH_NAN, axis=axis))
    onp.testing.assert_array_equal(np.argsort(a, axis=axis).asnumpy(),
                                   onp.argsort(WITH_NAN, axis=axis, kind="stable"))


def test_array_methods():
    x = TIES[0]
    a = np.array(x)
    before = a
    assert a.sort(axis=0) is None  # in place, as NumPy's ndarray.sort
    assert a is before
    onp.testing.assert_array_equal(a.asnumpy(), onp.sort(x, axis=0))
    b = np.array(x)
    onp.testing.assert_array_equal(b.argsort().asnumpy(), onp.argsort(x, kind="stable"))
    onp.testing.assert_array_equal(b.topk(k=2, ret_typ="value").asnumpy(),
                                   -onp.sort(-x, axis=-1)[:, :2])


# npx.topk(x, **kwargs) on X3 as MXNet 1.9.1 gives it (values and their dtypes).
X3 = onp.array([[0.3, -1.2, 2.5, 0.7, -0.1], [1.1, 0.4, -2.0, 3.3, 0.9],
                [-0.6, 2.2, 0.05, -1.4, 1.7]])
MXNET_TOPK = [
    (dict(k=2, ret_typ="value"), [[2.5, 0.7], [3.3, 1.1], [2.2, 1.7]], "float64"),
    (dict(k=3, ret_typ="indices"), [[2, 3, 0], [3, 0, 4], [1, 4, 2]], "float32"),
    (dict(k=2, ret_typ="mask"), [[0, 0, 1, 1, 0], [1, 0, 0, 1, 0], [0, 1, 0, 0, 1]], "float64"),
    (dict(k=1, axis=0, ret_typ="indices", dtype="int64"), [[1, 2, 0, 1, 2]], "int64"),
    (dict(k=4, axis=None, ret_typ="value"), [3.3, 2.5, 2.2, 1.7], "float64"),
]


@pytest.mark.parametrize("kwargs,want,dtype", MXNET_TOPK)
def test_topk_modes_equal_mxnet(kwargs, want, dtype):
    for topk in (npx.topk, nd.topk):
        got = topk(np.array(X3, dtype="float64"), **kwargs)
        assert got.dtype == onp.dtype(dtype)
        onp.testing.assert_allclose(got.asnumpy(), want)


def test_topk_both_equals_mxnet():
    values, idx = npx.topk(np.array(X3, dtype="float64"), k=2, axis=0, ret_typ="both",
                           is_ascend=True)
    onp.testing.assert_allclose(values.asnumpy(), [[-0.6, -1.2, -2.0, -1.4, -0.1],
                                                   [0.3, 0.4, 0.05, 0.7, 0.9]])
    assert idx.dtype == onp.float32
    onp.testing.assert_array_equal(idx.asnumpy(), [[2, 0, 1, 2, 0], [0, 1, 2, 0, 1]])


def test_topk_ties_by_position_and_nan_largest():
    a = np.array([[0.0, 7.0, 7.0, 1.0]])
    onp.testing.assert_array_equal(npx.topk(a, k=2).asnumpy(), [[1, 2]])  # MXNet 1.9.1's
    b = np.array([1.0, NAN, 3.0])
    onp.testing.assert_array_equal(npx.topk(b, k=2, dtype="int64").asnumpy(), [1, 2])


def test_mask_keeps_the_dtype_and_invoke_reads_any_dtype_spelling():
    b = np.array([[3, 1, 2, 5], [0, 7, 7, 1]], dtype="int32")
    mask = npx.topk(b, k=2, ret_typ="mask")
    assert mask.dtype == onp.int32  # as MXNet 1.9.1
    onp.testing.assert_array_equal(mask.asnumpy(), [[1, 0, 0, 1], [0, 1, 1, 0]])
    from janus import _janus
    for spelling in ("int32", onp.int32, onp.dtype("int32")):
        idx = _janus.invoke("argsort", [b], {"axis": 1, "dtype": spelling})[0]
        assert idx.dtype == onp.int32
        onp.testing.assert_array_equal(idx.asnumpy(), [[1, 2, 0, 3], [0, 3, 1, 2]])


def test_legacy_defaults_are_mxnets():
    a = np.array([[3.0, 1.0, 2.0, 5.0], [0.0, 7.0, 7.0, 1.0]])
    # MXNet 1.9.1: nd.argsort gives float32 positions, nd.topk float32 indices of the largest.
    assert nd.argsort(a).dtype == onp.float32
    onp.testing.assert_array_equal(nd.argsort(a).asnumpy(), [[1, 2, 0, 3], [0, 3, 1, 2]])
    onp.testing.assert_array_equal(nd.argsort(a, axis=None).asnumpy(), [4, 1, 7, 2, 0, 3, 5, 6])
    onp.testing.assert_array_equal(nd.sort(a, is_ascend=False).asnumpy(),
                                   [[5, 3, 2, 1], [7, 7, 1, 0]])
    assert nd.topk(a).dtype == onp.float32
    onp.testing.assert_array_equal(nd.topk(a).asnumpy(), [[3], [1]])


@pytest.mark.parametrize("values", [[3.0, 1.0, 3.0, 2.0, NAN, NAN, 1.0],
                                    [[5, 2, 2], [9, 5, 0]], [], [4.0]])
def test_unique_equals_numpy(values):
    x = onp.array(values, dtype=onp.int64 if values and isinstance(values[0], list)
                  else onp.float64)
    got = np.unique(np.array(x, dtype=x.dtype), return_index=True, return_inverse=True,
                    return_counts=True)
    want = onp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w.reshape(g.shape))
    assert got[0].dtype == x.dtype and all(g.dtype == onp.int64 for g in got[1:])
    onp.testing.assert_array_equal(np.unique(np.array(x, dtype=x.dtype)).asnumpy(),
                                   onp.unique(x))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_equals_numpy(side):
    a = onp.array([1.0, 2.0, 2.0, 3.0, 5.0, NAN])
    v = onp.array([[2.0, 0.0, 6.0], [NAN, 5.0, 2.5]])
    got = np.searchsorted(np.array(a, dtype="float64"), np.array(v, dtype="float64"), side=side)
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), onp.searchsorted(a, v, side=side))
    shuffled = onp.array([5, 1, 3, 2, 2])
    sorter = onp.argsort(shuffled, kind="stable")
    got = np.searchsorted(np.array(shuffled, dtype="int64"), np.array([2, 4], dtype="int64"),
                          side=side, sorter=np.array(sorter))
    onp.testing.assert_array_equal(got.asnumpy(),
                                   onp.searchsorted(shuffled, [2, 4], side=side, sorter=sorter))


@pytest.mark.parametrize("axis", [0, 1, None])
def test_take_along_axis_with_argsort_equals_numpy(axis):
    x = TIES[1]
    a = np.array(x)
    got = np.take_along_axis(a, np.argsort(a, axis=axis), axis=axis)
    onp.testing.assert_array_equal(got.asnumpy(), onp.sort(x, axis=axis))
    idx = onp.array([[-1, 0], [2, 2], [4, 1], [0, 0]])
    onp.testing.assert_array_equal(np.take_along_axis(a, np.array(idx, dtype="int64"), 1)
                                   .asnumpy(), onp.take_along_axis(x, idx, 1))


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda a: np.sort(a, axis=0)),
    ("sort_flat", lambda a: np.sort(a, axis=None)),
    ("topk_value", lambda a: npx.topk(a, k=2, ret_typ="value")),
    ("topk_both", lambda a: npx.topk(a, k=3, axis=0, ret_typ="both", is_ascend=True)[0]),
    ("legacy_sort", lambda a: nd.sort(a, is_ascend=False)),
    ("take_along_axis", lambda a: np.take_along_axis(
        a, np.array([[1, 1, -1], [0, 4, 2], [3, 3, 3], [2, 0, 1]], dtype="int64"), 1)),
])
def test_gradients_equal_finite_differences(name, fn):
    x0 = onp.random.RandomState(2).permutation(20).reshape(4, 5) * 0.5 + 0.1  # distinct
    w = onp.random.RandomState(3).randn(*fn(np.array(x0, dtype="float64")).shape)

    def loss(x):
        return float((fn(np.array(x, dtype="float64")).asnumpy() * w).sum())

    a = np.array(x0, dtype="float64")
    a.attach_grad()
    with autograd.record():
        y = (fn(a) * np.array(w, dtype="float64")).sum()
    y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), numeric_grad(loss, x0), rtol=1e-6, atol=1e-8)


class Ordering(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(6)

    def forward(self, x):
        h = self.dense(x)
        top = npx.topk(h, k=3, ret_typ="value")
        return np.sort(h, axis=-1)[:, :3] + top + npx.topk(h, k=2, ret_typ="mask").sum(axis=1,
                                                                                      keepdims=True)


def test_hybridized_block_equals_imperative_and_exports(tmp_path):
    net = Ordering()
    net.initialize()
    x = np.array(onp.random.RandomState(1).randn(3, 4).astype(onp.float32))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    prefix = str(tmp_path / "ordering")
    net.export(prefix, epoch=0)
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_along_an_axis_equals_numpy(axis):
    x = onp.array([[[1, 2], [1, 2], [0, 5]], [[1, 2], [1, 2], [0, 4]], [[3, 0], [3, 0], [0, 5]],
                   [[1, 2], [1, 2], [0, 4]]], dtype=onp.float32)
    got = np.unique(np.array(x), return_index=True, return_inverse=True, return_counts=True,
                    axis=axis)
    want = onp.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w.reshape(-1) if w.ndim == 1 else w)
    assert got[0].dtype == onp.float32 and got[1].dtype == onp.int64


def test_unique_inside_a_hybridized_trace_is_a_clear_error():
    class Uniq(nn.HybridBlock):
        def forward(self, x):
            return np.unique(x)

    net = Uniq()
    net.initialize()
    x = np.array([1.0, 1.0, 2.0])
    onp.testing.assert_array_equal(net(x).asnumpy(), [1, 2])
    net.hybridize()
    with pytest.raises(base.TraceError, match="unique: its output size depends on the values"):
        net(x)


def test_errors_name_the_values_and_what_was_expected():
    a = np.zeros((2, 3))
    with pytest.raises(IndexError, match=r"sort: axis 2 is out of range for an array of 2 "
                                         r"dimensions, expected in \[-2, 2\)"):
        np.sort(a, axis=2)
    with pytest.raises(IndexError, match="argsort: axis -3"):
        np.argsort(a, axis=-3)
    with pytest.raises(ValueError, match=r"topk: k is 4, expected 1 <= k <= 3 \(the extent of "
                                         r"axis -1 of shape"):
        npx.topk(a, k=4)
    with pytest.raises(ValueError, match="topk: k is 0, expected 1 <= k"):
        nd.topk(a, k=0)
    with pytest.raises(ValueError, match="topk: ret_typ is 'values', expected one of"):
        npx.topk(a, ret_typ="values")
    with pytest.raises(ValueError, match="sort: kind is 'bogo', expected one of"):
        np.sort(a, kind="bogo")
    with pytest.raises(TypeError, match="argsort: dtype uint8 is not an index type"):
        nd.argsort(a, dtype="uint8")
    with pytest.raises(ValueError, match="searchsorted: side is 'middle'"):
        np.searchsorted(np.array([1.0]), np.array([1.0]), side="middle")
    with pytest.raises(ValueError, match=r"unique: axis 2 is out of range for an array of shape "
                                         r"\(2, 3\), expected -2 <= axis < 2"):
        np.unique(np.ones((2, 3)), axis=2)
