"""The NumPy functions composed of Janus's operators (janus/numpy/_composed.py) and npx's
batch_dot and sequence_mask, against NumPy; their gradients flow; bad arguments are named."""
import numpy as onp
import pytest

from janus import autograd, np, npx

X = onp.random.RandomState(0).randn(3, 4).astype(onp.float32)

CASES = {
    "swapaxes": (lambda m, a: m.swapaxes(a, 0, 1)),
    "ravel": (lambda m, a: m.ravel(a)),
    "flip_axis": (lambda m, a: m.flip(a, 1)),
    "flip_all": (lambda m, a: m.flip(a)),
    "repeat_axis": (lambda m, a: m.repeat(a, 2, axis=1)),
    "repeat_flat": (lambda m, a: m.repeat(a, 3)),
    "tile_2d": (lambda m, a: m.tile(a, (2, 3))),
    "tile_int": (lambda m, a: m.tile(a, 2)),
    "tile_more_axes": (lambda m, a: m.tile(a, (2, 1, 1))),
    "outer": (lambda m, a: m.outer(a[0], a[1])),
    "tril": (lambda m, a: m.tril(a, -1)),
    "triu": (lambda m, a: m.triu(a, 1)),
    "var": (lambda m, a: m.var(a, axis=1)),
    "std_ddof": (lambda m, a: m.std(a, ddof=1)),
    "vstack": (lambda m, a: m.vstack([a[0], a[1]])),
    "hstack": (lambda m, a: m.hstack([a, a])),
    "column_stack": (lambda m, a: m.column_stack([a[0], a[1]])),
    "any": (lambda m, a: m.any(a > 1, axis=0)),
    "all": (lambda m, a: m.all(a > -3)),
    "logical_and": (lambda m, a: m.logical_and(a > 0, a < 1)),
    "logical_or": (lambda m, a: m.logical_or(a > 1, a < -1)),
    "logical_not": (lambda m, a: m.logical_not(a > 0)),
    "logical_xor": (lambda m, a: m.logical_xor(a > 0, a > 1)),
    "count_nonzero": (lambda m, a: m.count_nonzero(a > 0)),
    "cumsum_axis": (lambda m, a: m.cumsum(a, axis=1)),
    "cumsum_flat": (lambda m, a: m.cumsum(a)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_numpy(name):
    got = CASES[name](np, np.array(X))
    want = CASES[name](onp, X)
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    assert got.shape == onp.shape(want)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_nan_and_inf_tests():
    y = np.array([1.0, float("nan"), float("inf"), -float("inf")])
    onp.testing.assert_array_equal(np.isnan(y).asnumpy(), [False, True, False, False])
    onp.testing.assert_array_equal(np.isinf(y).asnumpy(), [False, False, True, True])
    onp.testing.assert_array_equal(np.isfinite(y).asnumpy(), [True, False, False, False])


def test_gradients_flow_through_the_compositions():
    a = np.array(X)
    a.attach_grad()
    with autograd.record():
        loss = (np.tile(a, (2, 1)) * 2).sum() + np.var(a) + np.flip(a, 0)[0].sum()
    loss.backward()
    want = 4 + 2 * (X - X.mean()) / X.size
    want[2] += 1
    onp.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_sequence_mask_as_d2l_uses_it():
    data = np.ones((2, 4, 3))
    masked = npx.sequence_mask(data, np.array([1, 3]), True, value=-1, axis=1)
    onp.testing.assert_array_equal(masked.asnumpy()[:, :, 0], [[1, -1, -1, -1], [1, 1, 1, -1]])
    time_major = npx.sequence_mask(np.ones((4, 2)), np.array([2, 4]), True, axis=0)
    onp.testing.assert_array_equal(time_major.asnumpy(), [[1, 1], [1, 1], [0, 1], [0, 1]])
    assert npx.sequence_mask(data) is data
    with pytest.raises(ValueError, match="sequence_mask: axis is 2, expected 0"):
        npx.sequence_mask(data, np.array([1, 3]), True, axis=2)
    with pytest.raises(ValueError, match="sequence_length has 3 lengths for a batch of 2"):
        npx.sequence_mask(data, np.array([1, 3, 2]), True, axis=1)


def test_batch_dot():
    a = onp.random.RandomState(1).randn(2, 3, 4).astype(onp.float32)
    b = onp.random.RandomState(2).randn(2, 5, 4).astype(onp.float32)
    got = npx.batch_dot(np.array(a), np.array(b), transpose_b=True).asnumpy()
    onp.testing.assert_allclose(got, a @ b.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"batch_dot: the arrays have shapes \(3, 4\)"):
        npx.batch_dot(np.ones((3, 4)), np.ones((4, 3)))


def test_bad_arguments_are_named():
    a = np.array(X)
    with pytest.raises(ValueError, match="repeat: repeats is \\[1, 2, 3\\], expected one integer"):
        np.repeat(a, [1, 2, 3], axis=0)
    with pytest.raises(ValueError, match="tile: reps is \\(-1,\\), expected integers >= 0"):
        np.tile(a, -1)
    with pytest.raises(IndexError, match="swapaxes: axis 5 is out of range for an array of 2"):
        np.swapaxes(a, 0, 5)
    with pytest.raises(ValueError, match="tril: the array has 1 axes, expected at least 2"):
        np.tril(a[0])


def test_hybridized_block_equals_imperative():
    from janus.gluon import nn

    class Masked(nn.HybridBlock):
        def forward(self, x, lengths):
            y = npx.sequence_mask(x, lengths, True, value=-1e6, axis=1)
            return npx.softmax(np.tile(y, (1, 1, 2)), axis=1) + np.var(x, axis=2, keepdims=True)

    net = Masked()
    x = np.array(onp.random.RandomState(3).randn(2, 4, 3).astype(onp.float32))
    lengths = np.array([2, 4])
    want = net(x, lengths).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x, lengths).asnumpy(), want, rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(net(x, lengths).asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_cumsum_of_integers_and_its_gradient():
    ints = np.array([1, 2, 3], dtype="int64")
    assert np.cumsum(ints).dtype == onp.int64
    onp.testing.assert_array_equal(np.cumsum(ints).asnumpy(), [1, 3, 6])
    a = np.array(X)
    a.attach_grad()
    with autograd.record():
        loss = np.cumsum(a, axis=1).sum()
    loss.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.tile([4.0, 3.0, 2.0, 1.0], (3, 1)))


def test_long_cumsums_go_in_blocks():
    for shape, axis in [((5000,), 0), ((3, 1300, 2), 1), ((2, 513), -1)]:
        x = onp.random.RandomState(4).rand(*shape)
        got = np.cumsum(np.array(x, dtype="float64"), axis=axis).asnumpy()
        onp.testing.assert_allclose(got, onp.cumsum(x, axis=axis), rtol=1e-9)


def test_permutation_shuffle_and_choice():
    np.random.seed(7)
    perm = np.random.permutation(10).asnumpy()
    assert sorted(perm.tolist()) == list(range(10)) and perm.dtype == onp.int64
    rows = np.arange(6).reshape(6, 1)
    np.random.shuffle(rows)
    assert sorted(rows.asnumpy().ravel().tolist()) == list(range(6))
    shuffled = np.random.permutation(np.array(X)).asnumpy()
    assert sorted(map(tuple, shuffled.tolist())) == sorted(map(tuple, X.tolist()))
    drawn = np.random.choice(5, (2, 2), replace=False).asnumpy()
    assert drawn.shape == (2, 2) and len(set(drawn.ravel().tolist())) == 4
    assert set(np.random.choice(3, 100).asnumpy().tolist()) <= {0, 1, 2}
    assert np.random.choice(np.arange(10), 4).shape == (4,)
    with pytest.raises(ValueError, match="6 draws without replacement from 5 elements"):
        np.random.choice(5, 6, replace=False)
    assert set(np.random.choice(5, 50, p=[0.5, 0, 0, 0, 0.5]).asnumpy().tolist()) <= {0, 4}
