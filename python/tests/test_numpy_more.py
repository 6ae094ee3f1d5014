"""janus/numpy/_more.py: rounding, diagonals, ptp, nonzero positions, np.take and the array
methods that forward to np functions, each against NumPy (MXNet's rule noted where it differs);
gradients, a hybridized block, and the errors."""
import warnings

import numpy as onp
import pytest

from janus import autograd, base, np
from janus.gluon import nn

HALVES = onp.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, -0.7, 2.3, 1e20, onp.inf, -onp.inf,
                    onp.nan])


@pytest.mark.parametrize("name", ["rint", "floor", "ceil", "trunc", "fix", "round", "around"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rounding_equals_numpy_on_halves_and_special_values(name, dtype):
    x = HALVES.astype(dtype)
    got = getattr(np, name)(np.array(x, dtype=dtype))
    want = getattr(onp, name)(x)
    assert got.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(onp.signbit(got.asnumpy()), onp.signbit(want))


@pytest.mark.parametrize("name", ["rint", "floor", "ceil", "trunc", "round"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_rounding_keeps_integers(name, dtype):
    x = onp.array([0, 1, 7, 3]).astype(dtype)
    got = getattr(np, name)(np.array(x, dtype=dtype))
    assert got.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(got.asnumpy(), x)


@pytest.mark.parametrize("decimals", [1, 2, -1, -2])
def test_around_with_decimals_equals_numpy(decimals):
    x = onp.array([1.25, 1.35, -2.675, 155.0, 149.99, 250.0, 0.045], dtype=onp.float64)
    got = np.around(np.array(x, dtype="float64"), decimals)
    onp.testing.assert_allclose(got.asnumpy(), onp.around(x, decimals), rtol=1e-15)
    i = onp.array([151, 250, -349, 5], dtype=onp.int64)
    onp.testing.assert_array_equal(np.round(np.array(i, dtype="int64"), decimals).asnumpy(),
                                   onp.round(i, decimals))
    assert np.array(x).round(decimals).shape == x.shape


def test_around_rejects_a_non_integer_decimals():
    with pytest.raises(TypeError, match="around: decimals is 1.5, expected an integer"):
        np.around(np.ones((2,)), 1.5)


def test_floor_divide_and_mod_still_match_numpy_with_the_floor_operator():
    a = onp.array([7.5, -7.5, 1e20, -3.0])
    b = onp.array([2.0, 2.0, 3.0, 2.0])
    onp.testing.assert_array_equal((np.array(a, dtype="float64") // np.array(b, dtype="float64"))
                                   .asnumpy(), a // b)
    # mod is exact, as NumPy's (from fmod): 1e20 % 3 is 1.
    onp.testing.assert_array_equal((np.array(a, dtype="float64") % np.array(b, dtype="float64"))
                                   .asnumpy(), a % b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_remainders_match_numpy_signs_zeros_included(dtype):
    a = onp.array([7, -7, 7, -7, 6, -6, 5, 0]).astype(dtype)
    b = onp.array([3, 3, -3, -3, -3, 3, 2, -4]).astype(dtype)
    for name in ["mod", "remainder", "fmod"]:
        got = getattr(np, name)(np.array(a, dtype=dtype), np.array(b, dtype=dtype)).asnumpy()
        want = getattr(onp, name)(a, b)
        onp.testing.assert_array_equal(got, want, err_msg=name)
        onp.testing.assert_array_equal(onp.signbit(got), onp.signbit(want), err_msg=name)
    onp.testing.assert_array_equal((np.array(a, dtype=dtype) % 3).asnumpy(), a % 3)
    onp.testing.assert_array_equal((10 % np.array(b, dtype=dtype)).asnumpy(), 10 % b)


def test_integer_remainder_by_zero_is_zero_as_numpy():
    a = onp.array([5, -5], dtype="int32")
    with onp.errstate(divide="ignore"):
        want = onp.mod(a, onp.zeros(2, "int32"))
    onp.testing.assert_array_equal(np.mod(np.array(a), np.zeros(2, dtype="int32")).asnumpy(),
                                   want)


def test_arctan2_hypot_copysign_match_numpy_and_differentiate():
    x = onp.array([1.0, -1.0, 0.5, -2.0, 3e200])
    y = onp.array([-1.0, -0.0, 2.0, 0.25, 4e200])
    for name in ["arctan2", "hypot", "copysign"]:
        onp.testing.assert_allclose(getattr(np, name)(np.array(x, dtype="float64"),
                                                      np.array(y, dtype="float64")).asnumpy(),
                                    getattr(onp, name)(x, y), rtol=1e-15, err_msg=name)
    a = np.array([0.5, -2.0], dtype="float64")
    b = np.array([1.5, 0.75], dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        (np.arctan2(a, b) + np.hypot(a, b)).sum().backward()
    an, bn = a.asnumpy(), b.asnumpy()
    r2 = an ** 2 + bn ** 2
    onp.testing.assert_allclose(a.grad.asnumpy(), bn / r2 + an / onp.sqrt(r2), rtol=1e-12)
    onp.testing.assert_allclose(b.grad.asnumpy(), -an / r2 + bn / onp.sqrt(r2), rtol=1e-12)


def test_arctan2_of_integers_is_a_type_error_naming_the_operator():
    with pytest.raises(TypeError, match="arctan2: input has dtype int32"):
        np.arctan2(np.array([1], dtype="int32"), np.array([1], dtype="int32"))


@pytest.mark.parametrize("name", ["rint", "floor", "ceil", "trunc", "round"])
def test_rounding_gradient_is_zero(name):
    x = np.array([0.3, -1.7, 2.5])
    x.attach_grad()
    with autograd.record():
        y = (getattr(np, name)(x) * 3 + x * 2).sum()
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2])


M = onp.arange(12, dtype=onp.float64).reshape(3, 4)
T3 = onp.arange(60, dtype=onp.float64).reshape(3, 4, 5)


@pytest.mark.parametrize("offset", [0, 1, 3, 4, 9, -1, -2, -3, -7])
def test_diagonal_and_trace_of_a_matrix(offset):
    a = np.array(M, dtype="float64")
    onp.testing.assert_array_equal(np.diagonal(a, offset).asnumpy(), onp.diagonal(M, offset))
    onp.testing.assert_array_equal(a.diagonal(offset).asnumpy(), M.diagonal(offset))
    onp.testing.assert_array_equal(np.diag(a, offset).asnumpy(), onp.diag(M, offset))
    assert np.trace(a, offset).item() == onp.trace(M, offset)
    assert a.trace(offset).item() == M.trace(offset)


@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (0, 2), (2, 1), (-1, -3)])
@pytest.mark.parametrize("offset", [0, 2, -1])
def test_diagonal_and_trace_over_other_axes(axes, offset):
    a = np.array(T3, dtype="float64")
    onp.testing.assert_array_equal(np.diagonal(a, offset, *axes).asnumpy(),
                                   onp.diagonal(T3, offset, *axes))
    onp.testing.assert_array_equal(np.trace(a, offset, *axes).asnumpy(),
                                   onp.trace(T3, offset, *axes))


@pytest.mark.parametrize("k", [0, 1, 2, -1, -3])
def test_diag_and_diagflat_build_matrices(k):
    v = onp.array([1.0, -2.0, onp.inf])
    onp.testing.assert_array_equal(np.diag(np.array(v), k).asnumpy(), onp.diag(v, k))
    w = onp.array([[1.0, 2.0], [3.0, 4.0]])
    onp.testing.assert_array_equal(np.diagflat(np.array(w), k).asnumpy(), onp.diagflat(w, k))
    onp.testing.assert_array_equal(np.diag([5, 6], k).asnumpy(), onp.diag([5.0, 6.0], k))


def test_diagonal_errors_are_named():
    with pytest.raises(ValueError, match="diagonal: the array has 1 axes, expected at least 2"):
        np.diagonal(np.ones((3,)))
    with pytest.raises(ValueError, match="diagonal: axis1 and axis2 are both axis 1"):
        np.diagonal(np.ones((3, 3)), 0, 1, -1)
    with pytest.raises(ValueError, match="diagonal: axis 2 is out of range for an array of 2"):
        np.diagonal(np.ones((3, 3)), 0, 0, 2)
    with pytest.raises(ValueError, match="diag: the array has 3 axes, expected 1 or 2"):
        np.diag(np.ones((2, 2, 2)))


def test_diag_and_trace_gradients():
    x = np.array(M, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = np.trace(x, 1) * 2 + np.diag(x, -1).sum()
    y.backward()
    want = 2 * onp.eye(3, 4, 1) + onp.eye(3, 4, -1)
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)
    v = np.array([1.0, 2.0])
    v.attach_grad()
    with autograd.record():
        z = (np.diag(v, 1) * np.array(onp.arange(9.0).reshape(3, 3))).sum()
    z.backward()
    onp.testing.assert_array_equal(v.grad.asnumpy(), [1.0, 5.0])


def test_ptp_equals_numpy():
    a = np.array(T3)
    assert np.ptp(a).item() == onp.ptp(T3)
    onp.testing.assert_array_equal(np.ptp(a, axis=1).asnumpy(), onp.ptp(T3, axis=1))
    onp.testing.assert_array_equal(a.ptp(axis=-1, keepdims=True).asnumpy(),
                                   onp.ptp(T3, axis=-1, keepdims=True))


NZ = onp.array([[0.0, 1.5, 0.0], [-2.0, 0.0, onp.nan]])


def test_nonzero_argwhere_flatnonzero_equal_numpy():
    a = np.array(NZ, dtype="float64")
    got = np.nonzero(a)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, onp.nonzero(NZ)):
        assert g.dtype == onp.int64
        onp.testing.assert_array_equal(g.asnumpy(), w)
    for g, w in zip(a.nonzero(), onp.nonzero(NZ)):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    onp.testing.assert_array_equal(np.argwhere(a).asnumpy(), onp.argwhere(NZ))
    onp.testing.assert_array_equal(np.flatnonzero(a).asnumpy(), onp.flatnonzero(NZ))
    empty = np.zeros((2, 3))
    assert np.argwhere(empty).shape == (0, 2)
    assert np.nonzero(empty)[1].shape == (0,)
    onp.testing.assert_array_equal(np.argwhere(np.array(3.0)).asnumpy(),
                                   onp.argwhere(onp.array(3.0)))


def test_nonzero_of_a_0d_array_is_an_error():
    with pytest.raises(ValueError, match="nonzero: the array is 0-d"):
        np.nonzero(np.array(1.0))


@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_nonzero_positions_inside_a_hybridized_trace_are_a_clear_error(name):
    class Positions(nn.HybridBlock):
        def forward(self, x):
            r = getattr(np, name)(x)
            return r[0] if isinstance(r, tuple) else r

    net = Positions()
    net.initialize()
    x = np.array([0.0, 2.0, 3.0])
    assert net(x).shape[0] == 2
    net.hybridize()
    with pytest.raises(base.TraceError, match=f"{name}: its output size depends on the values"):
        net(x)


def test_rounding_and_diagonals_trace_in_a_hybridized_block():
    class Block(nn.HybridBlock):
        def forward(self, x):
            return np.round(x, 1) + np.floor(x) + np.ceil(x) + np.trunc(x) + np.diag(
                np.diagonal(x)).sum() + np.trace(x)

    net = Block()
    net.initialize()
    x = np.array(onp.random.RandomState(1).uniform(-3, 3, size=(4, 4)))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)


def test_take_flattens_when_axis_is_none_and_knows_the_modes():
    a = np.array(M)
    onp.testing.assert_array_equal(np.take(a, [1, 5, -1]).asnumpy(), onp.take(M, [1, 5, -1]))
    onp.testing.assert_array_equal(a.take([2, 0], axis=1).asnumpy(), M.take([2, 0], axis=1))
    for mode in ("wrap", "clip"):
        onp.testing.assert_array_equal(np.take(a, [-5, 3, 7], axis=0, mode=mode).asnumpy(),
                                       onp.take(M, [-5, 3, 7], axis=0, mode=mode))
    with pytest.raises(ValueError, match="take: mode is 'nearest', expected one of"):
        np.take(a, [0], mode="nearest")


def test_array_methods_forward_to_numpy_functions():
    x = onp.array([[1.0, -2.0, 0.0], [4.0, 0.5, -1.5]])
    a = np.array(x)
    onp.testing.assert_array_equal(a.all(axis=1).asnumpy(), x.all(axis=1))
    onp.testing.assert_array_equal(a.any(axis=0).asnumpy(), x.any(axis=0))
    assert bool(a.any()) and not bool(a.all())
    onp.testing.assert_allclose(a.cumsum(axis=1).asnumpy(), x.cumsum(axis=1))
    onp.testing.assert_allclose(a.cumsum().asnumpy(), x.cumsum())
    onp.testing.assert_array_equal(a.ravel().asnumpy(), x.ravel())
    onp.testing.assert_array_equal(a.repeat(2, axis=1).asnumpy(), x.repeat(2, axis=1))
    onp.testing.assert_allclose(a.std(axis=0).asnumpy(), x.std(axis=0), rtol=1e-6)
    onp.testing.assert_allclose(a.var(ddof=1).item(), x.var(ddof=1), rtol=1e-6)
    onp.testing.assert_array_equal(a.swapaxes(0, 1).asnumpy(), x.swapaxes(0, 1))
    onp.testing.assert_array_equal(a.round().asnumpy(), x.round())
    s = np.array([1.0, 2.0, 4.0])
    onp.testing.assert_array_equal(s.searchsorted(np.array([2.0, 3.0])).asnumpy(), [1, 2])
    assert a.nbytes == x.nbytes == 48 and a.itemsize == 8
    assert np.ones((3,)).nbytes == 12 and np.ones((3,)).itemsize == 4
    assert np.ones((2, 3), dtype="int64").nbytes == 48
    onp.testing.assert_array_equal(a.conj().asnumpy(), x)
    onp.testing.assert_array_equal(a.conjugate().asnumpy(), x)
    onp.testing.assert_array_equal(a.real.asnumpy(), x)
    onp.testing.assert_array_equal(a.imag.asnumpy(), onp.zeros_like(x))
    a.fill(7)
    onp.testing.assert_array_equal(a.asnumpy(), onp.full((2, 3), 7.0))


def test_npx_nonzero_is_argwhere_and_npx_erf():
    from janus import npx
    got = npx.nonzero(np.array(NZ, dtype="float64"))
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), onp.argwhere(NZ))
    onp.testing.assert_allclose(npx.erf(np.array([0.5])).asnumpy(), [0.5204999], rtol=1e-6)


X = onp.array([[1.0, -2.0, 0.0, 3.5], [onp.inf, -onp.inf, onp.nan, 0.25], [7.0, 8.0, -9.0, 1.0]])


def test_elementwise_compositions_equal_numpy():
    a = np.array(X, dtype="float64")
    for name in ["fabs", "positive", "reciprocal", "deg2rad", "rad2deg", "radians", "degrees",
                 "isposinf", "isneginf", "real"]:
        with onp.errstate(divide="ignore"):
            want = getattr(onp, name)(X)
        onp.testing.assert_array_equal(getattr(np, name)(a).asnumpy(), want, err_msg=name)
    onp.testing.assert_array_equal(np.nan_to_num(a).asnumpy(), onp.nan_to_num(X))
    onp.testing.assert_array_equal(np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0).asnumpy(),
                                   onp.nan_to_num(X, nan=-1.0, posinf=9.0, neginf=-9.0))
    with onp.errstate(divide="ignore"):
        onp.testing.assert_array_equal(a.reciprocal().asnumpy()[0], 1 / X[0])


def test_isclose_allclose_array_equal():
    x = onp.array([1.0, onp.inf, onp.nan, 1e-9, 100.0])
    y = onp.array([1.0 + 1e-6, onp.inf, onp.nan, 0.0, 100.1])
    for equal_nan in (False, True):
        onp.testing.assert_array_equal(
            np.isclose(np.array(x, dtype="float64"), np.array(y, dtype="float64"),
                       equal_nan=equal_nan).asnumpy(), onp.isclose(x, y, equal_nan=equal_nan))
    assert np.allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7])) is True
    assert np.allclose(np.array([1.0, 2.0]), np.array([1.0, 2.1])) is False
    assert np.array_equal(np.array(x), np.array(x)) is False  # NaN != NaN
    assert np.array_equal(np.array(x), np.array(x), equal_nan=True) is True
    assert np.array_equal(np.ones((2,)), np.ones((3,))) is False


T4 = onp.arange(24, dtype=onp.float64).reshape(2, 3, 4)


def test_shape_functions_equal_numpy():
    a = np.array(T4)
    onp.testing.assert_array_equal(np.fliplr(a).asnumpy(), onp.fliplr(T4))
    onp.testing.assert_array_equal(np.flipud(a).asnumpy(), onp.flipud(T4))
    for shift, axis in [(1, None), (-3, None), (2, 1), (5, -1), ((1, 2), (0, 2)), (0, 1)]:
        onp.testing.assert_array_equal(np.roll(a, shift, axis).asnumpy(),
                                       onp.roll(T4, shift, axis))
    for v in [onp.array(2.0), onp.arange(3.0), onp.ones((2, 3))]:
        assert np.atleast_3d(np.array(v)).shape == onp.atleast_3d(v).shape
    onp.testing.assert_array_equal(np.dstack([a, a]).asnumpy(), onp.dstack([T4, T4]))
    for got, want in zip(np.array_split(np.arange(10), 3), onp.array_split(onp.arange(10.0), 3)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    for f in ["hsplit", "vsplit", "dsplit"]:
        parts = {"hsplit": 3, "vsplit": 2, "dsplit": [1, 3]}[f]
        for got, want in zip(getattr(np, f)(a, parts), getattr(onp, f)(T4, parts)):
            onp.testing.assert_array_equal(got.asnumpy(), want)
    for n, axis in [(1, -1), (2, 2), (1, 0), (0, 1)]:
        onp.testing.assert_array_equal(np.diff(a, n, axis).asnumpy(), onp.diff(T4, n, axis))
    for indexing in ("xy", "ij"):
        for got, want in zip(np.meshgrid(np.arange(3), np.arange(4), np.arange(2),
                                         indexing=indexing),
                             onp.meshgrid(onp.arange(3.0), onp.arange(4.0), onp.arange(2.0),
                                          indexing=indexing)):
            onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(np.row_stack([np.ones((2,)), np.zeros((2,))]).asnumpy(),
                                   onp.vstack([onp.ones(2), onp.zeros(2)]))


def test_shape_function_errors_are_named():
    with pytest.raises(ValueError, match="vsplit: the array has 1 axes, expected at least 2"):
        np.vsplit(np.ones((4,)), 2)
    with pytest.raises(ValueError, match="roll: 2 shifts for 3 axes"):
        np.roll(np.array(T4), (1, 2), (0, 1, 2))
    with pytest.raises(ValueError, match="meshgrid: indexing is 'xx'"):
        np.meshgrid(np.ones((2,)), indexing="xx")
    with pytest.raises(ValueError, match="tensordot: axis 2 of a has extent 4, axis 0 of b"):
        np.tensordot(np.array(T4), np.ones((3, 2)), ([2], [0]))


def test_products_equal_numpy():
    rng = onp.random.RandomState(3)
    x, y = rng.randn(2, 3, 4), rng.randn(3, 4, 5)
    a, b = np.array(x, dtype="float64"), np.array(y, dtype="float64")
    onp.testing.assert_allclose(np.tensordot(a, b).asnumpy(), onp.tensordot(x, y), rtol=1e-12)
    onp.testing.assert_allclose(np.tensordot(a, b, ([1, 2], [0, 1])).asnumpy(),
                                onp.tensordot(x, y, ([1, 2], [0, 1])), rtol=1e-12)
    w = rng.randn(4, 5)
    onp.testing.assert_allclose(np.tensordot(a, np.array(w, dtype="float64"), 1).asnumpy(),
                                onp.tensordot(x, w, 1), rtol=1e-12)
    z = rng.randn(6, 4)
    onp.testing.assert_allclose(np.inner(a, np.array(z, dtype="float64")).asnumpy(),
                                onp.inner(x, z), rtol=1e-12)
    onp.testing.assert_allclose(np.vdot(a, a).item(), onp.vdot(x, x), rtol=1e-12)


def test_average_equals_numpy():
    a = np.array(T4)
    assert abs(np.average(a).item() - onp.average(T4)) < 1e-5
    w = onp.array([1.0, 2.0, 3.0])
    onp.testing.assert_allclose(np.average(a, axis=1, weights=np.array(w)).asnumpy(),
                                onp.average(T4, axis=1, weights=w), rtol=1e-6)
    avg, total = np.average(a, axis=0, returned=True)
    onp.testing.assert_allclose(total.asnumpy(), onp.full((3, 4), 2.0))
    with pytest.raises(ValueError, match=r"average: weights of shape \(2,\)"):
        np.average(a, axis=1, weights=np.ones((2,)))


def test_more_array_methods():
    x = onp.array([[1.7, -2.5], [0.5, -0.2]])
    a = np.array(x, dtype="float64")
    for name in ["floor", "ceil", "rint", "trunc", "fix", "sign", "sin", "cos", "tanh"]:
        onp.testing.assert_allclose(getattr(a, name)().asnumpy(), getattr(onp, name)(x),
                                    rtol=1e-15, err_msg=name)
    onp.testing.assert_array_equal(a.diag().asnumpy(), onp.diag(x))
    onp.testing.assert_array_equal(a.flip(0).asnumpy(), onp.flip(x, 0))
    onp.testing.assert_array_equal(a.tile((1, 2)).asnumpy(), onp.tile(x, (1, 2)))
    assert a.expand_dims(1).shape == (2, 1, 2)
    assert a.broadcast_to((3, 2, 2)).shape == (3, 2, 2)
    assert [p.shape for p in a.split(2)] == [(1, 2), (1, 2)]
    onp.testing.assert_array_equal(a.zeros_like().asnumpy(), onp.zeros((2, 2)))
    onp.testing.assert_array_equal(a.ones_like().asnumpy(), onp.ones((2, 2)))


def test_constants_and_dtype_functions():
    assert onp.isnan(np.NAN) and onp.isnan(np.NaN) and np.PINF == onp.inf and np.NINF == -onp.inf
    assert np.PZERO == 0.0 and onp.signbit(np.NZERO)
    assert np.finfo(np.float32).eps == onp.finfo(onp.float32).eps
    assert np.promote_types("int32", "float32") == onp.float64
    assert np.result_type(np.ones((2,)), np.int64) == onp.float64
    assert np.min_scalar_type(300) == onp.uint16


def test_broadcast_rollaxis_rot90_equal_numpy():
    got = np.broadcast_arrays(np.ones((3, 1)), np.arange(4))
    assert [g.shape for g in got] == [(3, 4), (3, 4)]
    a = np.array(T4)
    for axis, start in [(2, 0), (0, 3), (-1, 1), (1, 1), (0, -1)]:
        assert np.rollaxis(a, axis, start).shape == onp.rollaxis(T4, axis, start).shape
        onp.testing.assert_array_equal(np.rollaxis(a, axis, start).asnumpy(),
                                       onp.rollaxis(T4, axis, start))
    for k in range(-1, 5):
        for axes in [(0, 1), (1, 2), (2, 0)]:
            onp.testing.assert_array_equal(np.rot90(a, k, axes).asnumpy(),
                                           onp.rot90(T4, k, axes), err_msg=f"{k} {axes}")
    with pytest.raises(ValueError, match="rot90: both axes are axis 1"):
        np.rot90(a, 1, (1, -2))


def test_index_helpers_equal_numpy():
    m = np.ones((3, 4))
    for got, want in zip(np.tril_indices_from(m, 1), onp.tril_indices_from(onp.ones((3, 4)), 1)):
        assert got.dtype == onp.int64
        onp.testing.assert_array_equal(got.asnumpy(), want)
    for got, want in zip(np.triu_indices_from(m), onp.triu_indices_from(onp.ones((3, 4)))):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    for got, want in zip(np.diag_indices_from(np.ones((3, 3, 3))),
                         onp.diag_indices_from(onp.ones((3, 3, 3)))):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError, match=r"diag_indices_from: the array has shape \(3, 4\)"):
        np.diag_indices_from(m)
    onp.testing.assert_array_equal(np.indices((2, 3)).asnumpy(), onp.indices((2, 3)))


def test_heaviside_array_equiv_ediff1d():
    x = onp.array([-1.5, 0.0, 2.0, onp.nan])
    onp.testing.assert_array_equal(np.heaviside(np.array(x, dtype="float64"), 0.5).asnumpy(),
                                   onp.heaviside(x, 0.5))
    assert np.array_equiv(np.array([1.0, 2.0]), np.array([[1.0, 2.0], [1.0, 2.0]])) is True
    assert np.array_equiv(np.array([1.0, 2.0]), np.array([1.0, 3.0])) is False
    assert np.array_equiv(np.ones((2,)), np.ones((3,))) is False
    y = onp.array([[1.0, 4.0], [9.0, 16.0]])
    onp.testing.assert_array_equal(np.ediff1d(np.array(y), to_end=[0.0], to_begin=-1.0)
                                   .asnumpy(), onp.ediff1d(y, to_end=[0.0], to_begin=-1.0))


def test_nan_reductions_equal_numpy():
    x = onp.array([[1.0, onp.nan, 3.0], [onp.nan, onp.nan, onp.nan], [-2.0, 5.0, onp.nan]])
    a = np.array(x, dtype="float64")
    for name in ["nansum", "nanprod", "nanmax", "nanmin"]:
        for axis in [None, 0, 1]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # All-NaN slices
                want = getattr(onp, name)(x, axis=axis)
            onp.testing.assert_array_equal(getattr(np, name)(a, axis=axis).asnumpy(), want,
                                           err_msg=f"{name} {axis}")
    for axis in [None, 1]:
        onp.testing.assert_array_equal(np.nancumsum(a, axis).asnumpy(), onp.nancumsum(x, axis))
    assert a.nansum().item() == onp.nansum(x)
    onp.testing.assert_array_equal(a.nanprod(axis=1).asnumpy(), onp.nanprod(x, axis=1))


def test_mxnet_style_array_methods():
    x = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a = np.array(x, dtype="float64")
    onp.testing.assert_array_equal(a.degrees().asnumpy(), onp.degrees(x))
    onp.testing.assert_array_equal(a.radians().asnumpy(), onp.radians(x))
    assert np.array([2.5]).asscalar() == 2.5
    onp.testing.assert_array_equal(a.slice_axis(1, 1, None).asnumpy(), x[:, 1:])
    onp.testing.assert_array_equal(a.slice_axis(0, 0, 1).asnumpy(), x[:1])
    assert np.ones((3,)).broadcast_like(a).shape == (2, 3)
    assert a.reshape_like(np.ones((3, 2))).shape == (3, 2)


TRIG = {"tan": (-1.2, 1.2), "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctan": (-3, 3),
        "sinh": (-3, 3), "cosh": (-3, 3), "arcsinh": (-3, 3), "arccosh": (1.2, 4),
        "arctanh": (-0.9, 0.9), "log2": (0.2, 5), "log10": (0.2, 5), "expm1": (-2, 2),
        "cbrt": (-8, 8)}


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trig_and_log_functions_equal_numpy_with_gradients(name):
    lo, hi = TRIG[name]
    x = onp.random.RandomState(7).uniform(lo, hi, size=(3, 4))
    a = np.array(x, dtype="float64")
    onp.testing.assert_allclose(getattr(np, name)(a).asnumpy(), getattr(onp, name)(x),
                                rtol=1e-14)
    onp.testing.assert_allclose(getattr(a, name)().asnumpy(), getattr(onp, name)(x), rtol=1e-14)
    f32 = getattr(np, name)(np.array(x, dtype="float32"))
    assert f32.dtype == onp.float32
    onp.testing.assert_allclose(f32.asnumpy(), getattr(onp, name)(x.astype(onp.float32)),
                                rtol=2e-6, atol=1e-6)
    a.attach_grad()
    with autograd.record():
        y = getattr(np, name)(a).sum()
    y.backward()
    h = 1e-6
    numeric = (getattr(onp, name)(x + h) - getattr(onp, name)(x - h)) / (2 * h)
    onp.testing.assert_allclose(a.grad.asnumpy(), numeric, rtol=1e-6, atol=1e-8)


def test_trig_and_log_outside_their_domains_and_on_integers():
    with onp.errstate(invalid="ignore", divide="ignore"):
        x = onp.array([2.0, -1.0, 0.0, 1.0])
        for name in ["arcsin", "arccosh", "arctanh", "log2", "log10"]:
            onp.testing.assert_allclose(getattr(np, name)(np.array(x, dtype="float64"))
                                        .asnumpy(), getattr(onp, name)(x), rtol=1e-15,
                                        err_msg=name)
    with pytest.raises(TypeError, match="tan: input has dtype int32"):
        np.tan(np.array([1], dtype="int32"))


def test_numeric_helpers_equal_numpy():
    onp.testing.assert_allclose(np.logspace(0, 3, 4).asnumpy(), onp.logspace(0, 3, 4), rtol=1e-6)
    onp.testing.assert_allclose(np.logspace(1, 2, 3, base=2.0, dtype="float64").asnumpy(),
                                onp.logspace(1, 2, 3, base=2.0), rtol=1e-15)
    x, y = onp.array([7.5, -7.5, 3.0]), onp.array([2.0, 2.0, -2.0])
    q, r = np.divmod(np.array(x, dtype="float64"), np.array(y, dtype="float64"))
    onp.testing.assert_array_equal(q.asnumpy(), onp.divmod(x, y)[0])
    onp.testing.assert_array_equal(r.asnumpy(), onp.divmod(x, y)[1])
    fp = np.float_power(np.array([2, 3], dtype="int32"), 2)
    assert fp.dtype == onp.float64
    onp.testing.assert_array_equal(fp.asnumpy(), onp.float_power([2, 3], 2))
    frac, whole = np.modf(np.array([-1.75, 2.5], dtype="float64"))
    onp.testing.assert_array_equal(frac.asnumpy(), onp.modf([-1.75, 2.5])[0])
    onp.testing.assert_array_equal(whole.asnumpy(), onp.modf([-1.75, 2.5])[1])
    m = onp.array([[3.0, 1.0], [2.0, 0.0]])
    onp.testing.assert_array_equal(np.append(np.array(m), [5.0]).asnumpy(), onp.append(m, [5.0]))
    onp.testing.assert_array_equal(np.append(np.array(m), np.array(m), axis=1).asnumpy(),
                                   onp.append(m, m, axis=1))
    onp.testing.assert_array_equal(np.msort(np.array(m)).asnumpy(), onp.sort(m, axis=0))


def test_select_unravel_trapz_isin_equal_numpy():
    x = onp.arange(6.0)
    got = np.select([np.array(x) < 2, np.array(x) > 3], [np.array(x), np.array(x) ** 2], 42.0)
    onp.testing.assert_array_equal(got.asnumpy(), onp.select([x < 2, x > 3], [x, x ** 2], 42.0))
    with pytest.raises(ValueError, match="select: 1 conditions for 2 choices"):
        np.select([np.array(x) < 2], [np.array(x), np.array(x)])
    for got, want in zip(np.unravel_index(np.array([0, 5, 23], dtype="int64"), (2, 3, 4)),
                         onp.unravel_index([0, 5, 23], (2, 3, 4))):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError, match=r"unravel_index: an index is outside \[0, 24\)"):
        np.unravel_index(np.array([24], dtype="int64"), (2, 3, 4))
    y = onp.array([[1.0, 2.0, 4.0], [0.0, 3.0, -1.0]])
    pts = onp.array([0.0, 0.5, 2.0])
    trapezoid = getattr(onp, "trapezoid", None) or onp.trapz
    onp.testing.assert_allclose(np.trapz(np.array(y, dtype="float64")).asnumpy(), trapezoid(y))
    onp.testing.assert_allclose(
        np.trapz(np.array(y, dtype="float64"), np.array(pts, dtype="float64")).asnumpy(),
        trapezoid(y, pts))
    onp.testing.assert_allclose(np.trapz(np.array(y, dtype="float64"), dx=0.5, axis=0).asnumpy(),
                                trapezoid(y, dx=0.5, axis=0))
    e = onp.array([[1.0, 5.0], [3.0, 2.0]])
    onp.testing.assert_array_equal(np.isin(np.array(e), [2.0, 3.0]).asnumpy(), onp.isin(e, [2, 3]))
    onp.testing.assert_array_equal(np.isin(np.array(e), [2.0], invert=True).asnumpy(),
                                   onp.isin(e, [2.0], invert=True))
    onp.testing.assert_array_equal(np.in1d(np.array(e), [5.0]).asnumpy(),
                                   onp.isin(e.ravel(), [5.0]))


def test_trig_and_log_functions_in_a_hybridized_block():
    class Block(nn.HybridBlock):
        def forward(self, x):
            return (np.tan(x) + np.cbrt(x) * np.sinh(x) + np.log2(np.abs(x) + 1) -
                    np.arctan(x) * np.expm1(x)) * np.cosh(x)

    net = Block()
    net.initialize()
    x = np.array(onp.random.RandomState(2).uniform(-1, 1, size=(3, 5)))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_mxnet_array_methods_over_npx():
    x = onp.array([[1.0, 2.0, 0.5], [3.0, -1.0, 0.0]])
    a = np.array(x, dtype="float64")
    lse = onp.log(onp.exp(x).sum(axis=-1, keepdims=True))
    onp.testing.assert_allclose(a.log_softmax().asnumpy(), x - lse, rtol=1e-12)
    e = onp.exp(-x)
    onp.testing.assert_allclose(a.softmin().asnumpy(), e / e.sum(-1, keepdims=True), rtol=1e-12)
    onp.testing.assert_allclose(np.array([4.0, 0.25]).rsqrt().asnumpy(), [0.5, 2.0])
    idx = np.array([0, 2], dtype="int64")
    onp.testing.assert_array_equal(idx.one_hot(3).asnumpy(), onp.eye(3)[[0, 2]])
    onp.testing.assert_array_equal(idx.one_hot(3, on_value=5.0, off_value=-1.0).asnumpy(),
                                   onp.where(onp.eye(3)[[0, 2]] > 0, 5.0, -1.0))
    onp.testing.assert_array_equal(a.pick(np.array([2, 0], dtype="int64")).asnumpy(), [0.5, 3.0])
    shp = a.shape_array()
    assert shp.dtype == onp.int64 and shp.asnumpy().tolist() == [2, 3]
    assert a.size_array().asnumpy().tolist() == [6]
    assert a.stype == "default" and a.tostype("default") is a
    with pytest.raises(base.NotSupportedError, match="tostype: storage type 'csr'"):
        a.tostype("csr")


def test_set_functions_equal_numpy():
    x, y = onp.array([5.0, 1.0, 3.0, 1.0, 7.0]), onp.array([[3.0, 9.0], [1.0, 1.0]])
    a, b = np.array(x, dtype="float64"), np.array(y, dtype="float64")
    for name in ["union1d", "intersect1d", "setdiff1d", "setxor1d"]:
        onp.testing.assert_array_equal(getattr(np, name)(a, b).asnumpy(),
                                       getattr(onp, name)(x, y), err_msg=name)


def test_cov_and_corrcoef_equal_numpy():
    rng = onp.random.RandomState(4)
    m, y = rng.randn(3, 6), rng.randn(6)
    a = np.array(m, dtype="float64")
    onp.testing.assert_allclose(np.cov(a).asnumpy(), onp.cov(m), rtol=1e-12)
    onp.testing.assert_allclose(np.cov(a.T, rowvar=False, bias=True).asnumpy(),
                                onp.cov(m.T, rowvar=False, bias=True), rtol=1e-12)
    onp.testing.assert_allclose(np.cov(a, np.array(y, dtype="float64"), ddof=2).asnumpy(),
                                onp.cov(m, y, ddof=2), rtol=1e-12)
    onp.testing.assert_allclose(np.cov(np.array(y, dtype="float64")).item(), onp.cov(y),
                                rtol=1e-12)
    onp.testing.assert_allclose(np.corrcoef(a).asnumpy(), onp.corrcoef(m), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="cov: fweights and aweights"):
        np.cov(a, fweights=[1, 2, 3, 4, 5, 6])


def test_npx_cast_reshape_like_shape_array():
    from janus import npx
    a = np.array([[1.5, 2.5, 3.5]])
    c = npx.cast(a, "int32")
    assert c.dtype == onp.int32 and c.asnumpy().tolist() == [[1, 2, 3]]
    assert npx.reshape_like(a, np.ones((3, 1))).shape == (3, 1)
    assert npx.shape_array(a).asnumpy().tolist() == [1, 3]


def test_npx_and_nd_reshape_like_take_mxnets_ranges():
    from janus import nd, npx
    a = np.array(onp.arange(24, dtype="float32").reshape(2, 6, 2))
    like = np.ones((3, 2, 5))
    y = npx.reshape_like(a, like, lhs_begin=1, lhs_end=2, rhs_begin=0, rhs_end=2)
    assert y.shape == (2, 3, 2, 2)
    assert y.asnumpy().ravel().tolist() == list(range(24))
    assert npx.reshape_like(a, like, lhs_begin=-2, lhs_end=-1, rhs_end=-1).shape == (2, 3, 2, 2)
    assert npx.reshape_like(a, np.ones((4, 3)), lhs_end=2).shape == (4, 3, 2)
    assert nd.reshape_like(nd.zeros((2, 36)), nd.zeros((6, 6, 2))).shape == (6, 6, 2)
    with pytest.raises(ValueError, match="reshape_like: lhs_begin must be an integer or None"):
        npx.reshape_like(a, like, lhs_begin=1.5)
    with pytest.raises(Exception, match=r"x_axes \[3, 1\] begins at axis 3 after its end 1"):
        npx.reshape_like(a, like, lhs_begin=3, lhs_end=1)
