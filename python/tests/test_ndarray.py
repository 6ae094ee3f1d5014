"""Arrays and operators against NumPy."""
import numpy as onp
import pytest

import janus as mx
from janus import np, npx


def close(a, b, tol=1e-5):
    onp.testing.assert_allclose(a.asnumpy() if isinstance(a, np.ndarray) else a, b, rtol=tol,
                                atol=tol)


def test_creation_and_attributes():
    x = np.array([[1, 2, 3], [4, 5, 6]])
    assert x.shape == (2, 3) and x.dtype == onp.float32 and x.ndim == 2 and x.size == 6
    assert x.ctx == mx.cpu(0) and x.device == mx.cpu(0)
    assert isinstance(x.asnumpy(), onp.ndarray)
    close(np.zeros((2, 3)), onp.zeros((2, 3)))
    close(np.ones(4), onp.ones(4))
    close(np.full((2, 2), 7), onp.full((2, 2), 7))
    close(np.arange(12).reshape(3, 4), onp.arange(12).reshape(3, 4))
    assert np.arange(3, dtype="int64").dtype == onp.int64
    a = onp.arange(6, dtype=onp.float64).reshape(2, 3)
    assert np.array(a).dtype == onp.float64
    close(np.array(a), a)
    assert np.array([1, 2]).astype("int32").dtype == onp.int32


def test_random_is_seeded():
    mx.random.seed(42)
    a = np.random.normal(0, 1, (3, 4)).asnumpy()
    npx.random.seed(42)
    b = np.random.normal(0, 1, (3, 4)).asnumpy()
    onp.testing.assert_array_equal(a, b)
    u = np.random.uniform(2, 3, size=(1000,)).asnumpy()
    assert u.min() >= 2 and u.max() <= 3


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__pow__"])
def test_arithmetic_with_broadcasting(op):
    a = onp.random.RandomState(0).uniform(1, 2, (3, 1, 4)).astype(onp.float32)
    b = onp.random.RandomState(1).uniform(1, 2, (5, 1)).astype(onp.float32)
    close(getattr(np.array(a), op)(np.array(b)), getattr(a, op)(b))
    close(getattr(np.array(a), op)(2.5), getattr(a, op)(onp.float32(2.5)))


def test_scalars_on_the_left_and_unary():
    a = onp.array([1.0, 2.0, 4.0], dtype=onp.float32)
    x = np.array(a)
    close(1 - x, 1 - a)
    close(2 / x, 2 / a)
    close(2 ** x, 2 ** a)
    close(-x, -a)
    close(np.exp(x), onp.exp(a))
    close(np.sqrt(x), onp.sqrt(a))
    close(abs(-x), a)


def test_comparisons():
    a = onp.array([[1, 5], [3, 2]], dtype=onp.float32)
    x = np.array(a)
    assert (x > 2).dtype == onp.bool_
    onp.testing.assert_array_equal((x > 2).asnumpy(), a > 2)
    onp.testing.assert_array_equal((x == np.array([1, 2])).asnumpy(), a == onp.array([1, 2]))
    assert (x < 3).sum().item() == 2


def test_inplace_operators_keep_the_array():
    x = np.ones((2, 2))
    y = x
    x += 1
    x *= np.array([1, 3])
    assert x is y
    close(y, [[2, 6], [2, 6]])
    x -= 1
    x /= 2
    close(y, [[0.5, 2.5], [0.5, 2.5]])


def test_indexing():
    a = onp.arange(24, dtype=onp.float32).reshape(4, 6)
    x = np.array(a)
    close(x[1], a[1])
    close(x[-1], a[-1])
    close(x[1:3], a[1:3])
    close(x[:, 2], a[:, 2])
    close(x[1, 2:5], a[1, 2:5])
    close(x[::2, 1::2], a[::2, 1::2])
    close(x[None, 1], a[None, 1])
    close(x[..., 0], a[..., 0])
    close(x[np.array([3, 0], dtype="int64")], a[[3, 0]])
    assert x[2, 3].item() == a[2, 3]
    with pytest.raises(IndexError):
        x[4]


def test_slice_assignment():
    x = np.zeros((3, 4))
    x[1] = 5
    x[2, 1:3] = np.array([7, 8])
    x[:, 3] = 1  # not contiguous: through the host
    a = onp.zeros((3, 4), dtype=onp.float32)
    a[1] = 5
    a[2, 1:3] = [7, 8]
    a[:, 3] = 1
    close(x, a)
    x[:] = 2
    close(x, onp.full((3, 4), 2))


def test_reductions():
    a = onp.random.RandomState(0).uniform(-1, 1, (3, 4, 5)).astype(onp.float32)
    x = np.array(a)
    close(x.sum(), a.sum(), 1e-4)
    close(x.sum(axis=1), a.sum(axis=1), 1e-4)
    close(np.sum(x, axis=(0, 2), keepdims=True), a.sum(axis=(0, 2), keepdims=True), 1e-4)
    close(x.mean(axis=-1), a.mean(axis=-1))
    close(x.max(axis=0), a.max(axis=0))
    close(np.min(x, axis=2, keepdims=True), a.min(axis=2, keepdims=True))
    onp.testing.assert_array_equal(x.argmax(axis=1).asnumpy(), a.argmax(axis=1))


def test_dot_reshape_transpose():
    a = onp.random.RandomState(0).uniform(-1, 1, (3, 4)).astype(onp.float32)
    b = onp.random.RandomState(1).uniform(-1, 1, (4, 2)).astype(onp.float32)
    close(np.dot(np.array(a), np.array(b)), a @ b)
    close(np.array(a) @ np.array(b), a @ b)
    close(np.array(a).T, a.T)
    close(np.array(a).reshape((2, 6)), a.reshape(2, 6))
    close(np.array(a).reshape(-1, 2), a.reshape(-1, 2))
    v = onp.array([1, 2, 3, 4], dtype=onp.float32)
    close(np.dot(np.array(v), np.array(v)), v @ v)


def test_npx_functions():
    a = onp.array([[1.0, -2.0, 3.0]], dtype=onp.float32)
    x = np.array(a)
    close(npx.relu(x), onp.maximum(a, 0))
    e = onp.exp(a - a.max())
    close(npx.softmax(x), e / e.sum())
    close(npx.log_softmax(x), onp.log(e / e.sum()))
    close(npx.sigmoid(x), 1 / (1 + onp.exp(-a)))
    assert npx.num_gpus() == 0 and mx.context.num_gpus() == 0
    npx.set_np()


def test_devices_and_copies():
    x = np.ones((2, 3), ctx=npx.cpu(1))
    assert x.ctx == mx.cpu(1)
    y = x.as_in_ctx(mx.cpu(0))
    assert y.ctx == mx.cpu(0)
    z = np.zeros((2, 3))
    x.copyto(z)
    close(z, onp.ones((2, 3)))
    assert x.copyto(mx.cpu(2)).ctx == mx.cpu(2)
    with mx.cpu(3):
        assert np.zeros(2).ctx == mx.cpu(3)


def test_item_and_conversions():
    assert np.array([3.5]).item() == 3.5
    assert isinstance(np.array([3], dtype="int64").item(), int)
    assert float(np.array(2.0)) == 2.0
    assert onp.asarray(np.ones(3)).tolist() == [1, 1, 1]
    assert [r.item() for r in np.arange(3)] == [0, 1, 2]
    np.ones(3).wait_to_read()


def test_printing_like_mxnet():
    assert repr(np.array([[1, 2]])) == "array([[1., 2.]])"
    assert repr(np.arange(3, dtype="int64")) == "array([0, 1, 2], dtype=int64)"
    assert repr(np.array([1.5], dtype="float64")) == "array([1.5], dtype=float64)"
    assert repr(np.array([1, 0]) > 0) == "array([ True, False])"
    assert repr(np.ones(2, ctx=mx.cpu(1))) == "array([1., 1.], ctx=cpu(1))"
    assert str(np.array([1, 2])) == "[1. 2.]"
