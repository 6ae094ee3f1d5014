"""np.linalg's square-matrix functions against NumPy: values, batches, gradients against finite
differences, a hybridized block, and the errors."""
import numpy as onp
import pytest

import janus as mx
from janus import gluon, np

from finite_differences import assert_autograd_matches


def spd(rng, *shape):
    m = rng.normal(size=shape)
    return m @ onp.swapaxes(m, -1, -2) / shape[-1] + onp.eye(shape[-1])


def invertible(rng, *shape):
    return rng.normal(size=shape) + shape[-1] * onp.eye(shape[-1])


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 3, 2, 2), (1, 1)])
def test_values_equal_numpy(shape):
    rng = onp.random.default_rng(0)
    a = invertible(rng, *shape)
    s = spd(rng, *shape)
    b = rng.normal(size=shape[:-1])
    onp.testing.assert_allclose(np.linalg.inv(np.array(a)).asnumpy(), onp.linalg.inv(a),
                                rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(np.linalg.det(np.array(a)).asnumpy(), onp.linalg.det(a),
                                rtol=1e-5)
    sign, logabs = np.linalg.slogdet(np.array(a, dtype="float64"))
    want_sign, want_logabs = onp.linalg.slogdet(a)
    onp.testing.assert_array_equal(sign.asnumpy(), want_sign)
    onp.testing.assert_allclose(logabs.asnumpy(), want_logabs, rtol=1e-12)
    onp.testing.assert_allclose(np.linalg.cholesky(np.array(s)).asnumpy(), onp.linalg.cholesky(s),
                                rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(np.linalg.solve(np.array(a), np.array(b)).asnumpy(),
                                onp.linalg.solve(a, b), rtol=1e-4, atol=1e-5)
    bk = rng.normal(size=shape[:-1] + (3,))
    onp.testing.assert_allclose(np.linalg.solve(np.array(a), np.array(bk)).asnumpy(),
                                onp.linalg.solve(a, bk), rtol=1e-4, atol=1e-5)


def test_singular_matrices():
    a = onp.array([[1.0, 2.0], [2.0, 4.0]])
    sign, logabs = np.linalg.slogdet(np.array(a))
    assert sign.item() == 0 and logabs.item() == -onp.inf
    assert np.linalg.det(np.array(a)).item() == 0
    y = np.linalg.inv(np.array(onp.stack([onp.eye(2), a])))
    with pytest.raises(ValueError, match=r"linalg_inv: matrix 1 of the stack \[2, 2, 2\] is "
                                         r"singular, expected an invertible matrix"):
        y.asnumpy()
    with pytest.raises(ValueError, match=r"linalg_cholesky: matrix 0 of the stack \[2, 2\] is not "
                                         r"positive definite"):
        np.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])).wait_to_read()


def test_cholesky_reads_the_lower_triangle_as_numpy():
    s = spd(onp.random.default_rng(1), 3, 3)
    s_upper_garbage = onp.tril(s) + onp.triu(onp.full((3, 3), 7.0), 1)
    onp.testing.assert_allclose(np.linalg.cholesky(np.array(s_upper_garbage)).asnumpy(),
                                onp.linalg.cholesky(s), rtol=1e-5, atol=1e-6)


def test_tensorinv_and_tensorsolve_equal_numpy():
    rng = onp.random.default_rng(2)
    a = rng.normal(size=(4, 6, 8, 3)) + 0  # ind=2: (4, 6) onto (8, 3)
    a = (a.reshape(24, 24) + 24 * onp.eye(24)).reshape(4, 6, 8, 3)
    onp.testing.assert_allclose(np.linalg.tensorinv(np.array(a)).asnumpy(),
                                onp.linalg.tensorinv(a), rtol=1e-4, atol=1e-6)
    b = rng.normal(size=(4, 6))
    onp.testing.assert_allclose(np.linalg.tensorsolve(np.array(a), np.array(b)).asnumpy(),
                                onp.linalg.tensorsolve(a, b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["inv", "det", "logabsdet", "cholesky_of_bbt", "solve"])
def test_gradients_match_finite_differences(name):
    rng = onp.random.default_rng(3)
    a0 = invertible(rng, 2, 3, 3)
    probe = rng.normal(size=(2, 3, 3))
    rhs = rng.normal(size=(2, 3))

    def forward(a):
        if name == "inv":
            return (np.linalg.inv(a) * np.array(probe)).sum()
        if name == "det":
            return (np.linalg.det(a) * np.array(probe[:, 0, 0])).sum()
        if name == "logabsdet":
            return np.linalg.slogdet(a)[1].sum()
        if name == "cholesky_of_bbt":  # a symmetric input built from a: both triangles count
            return (np.linalg.cholesky(np.matmul(a, a.transpose(0, 2, 1))) *
                    np.array(probe)).sum()
        return (np.linalg.solve(a, np.array(rhs)) * np.array(probe[:, 0])).sum()

    assert_autograd_matches(forward, a0)


def test_a_hybridized_block_equals_its_imperative_calls():
    class Whiten(gluon.HybridBlock):
        def forward(self, cov, x):
            return np.linalg.solve(np.linalg.cholesky(cov), x) + np.linalg.det(cov).reshape((-1, 1))

    rng = onp.random.default_rng(4)
    cov = np.array(spd(rng, 2, 3, 3).astype(onp.float32))
    x = np.array(rng.normal(size=(2, 3)).astype(onp.float32))
    net = Whiten()
    want = net(cov, x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(cov, x).asnumpy(), want, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(net(cov, x).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"linalg.inv: input has shape \(2, 3\), expected square "
                                         r"matrices \(..., n, n\)"):
        np.linalg.inv(np.ones((2, 3)))
    with pytest.raises(mx.base.ShapeError, match=r"linalg_slogdet: input has shape \[3\], "
                                                 r"expected square matrices"):
        mx._janus.invoke("linalg_slogdet", [np.ones((3,))], {})
    with pytest.raises(TypeError, match=r"linalg_inv: dtype int32 is not supported, expected "
                                        r"float32 or float64"):
        np.linalg.inv(np.ones((2, 2), dtype="int32"))
    with pytest.raises(ValueError, match=r"linalg.solve: a has shape \(3, 3\) and b \(4,\)"):
        np.linalg.solve(np.ones((3, 3)), np.ones((4,)))
    with pytest.raises(ValueError, match=r"linalg.tensorinv: a has shape \(2, 3\)"):
        np.linalg.tensorinv(np.ones((2, 3)), ind=1)
