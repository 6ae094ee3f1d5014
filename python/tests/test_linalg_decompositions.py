"""np.linalg's eigen-, singular value and QR decompositions and what is composed of them (pinv,
lstsq, matrix_rank) against NumPy: values, signs, batches, gradients against finite differences,
a hybridized block, and the errors."""
import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, np

from finite_differences import assert_autograd_matches


def positive_largest(v):
    """v's columns (..., n, k) with each column's largest component positive, as Janus's."""
    if v.size == 0:
        return v
    idx = onp.argmax(onp.abs(v), axis=-2)[..., None, :]
    return v * onp.sign(onp.take_along_axis(v, idx, axis=-2))


def symmetric(rng, *shape):
    m = rng.normal(size=shape)
    return (m + onp.swapaxes(m, -1, -2)) / 2


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (2, 0, 0)])
def test_eigh_equals_numpy(shape):
    a = symmetric(onp.random.default_rng(0), *shape)
    w, v = np.linalg.eigh(np.array(a, dtype="float64"))
    want_w, want_v = onp.linalg.eigh(a)
    onp.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(v.asnumpy(), positive_largest(want_v), rtol=1e-8, atol=1e-10)
    onp.testing.assert_allclose(np.linalg.eigvalsh(np.array(a)).asnumpy(), want_w, rtol=1e-5,
                                atol=1e-5)
    upper = onp.triu(a) + onp.tril(onp.full(shape, 9.0), -1)
    onp.testing.assert_allclose(np.linalg.eigvalsh(np.array(upper, dtype="float64"),
                                                   UPLO="U").asnumpy(), want_w, rtol=1e-10,
                                atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (5, 2), (2, 5), (2, 4, 3), (1, 1)])
def test_svd_equals_numpy(shape):
    a = onp.random.default_rng(1).normal(size=shape)
    u, s, vh = np.linalg.svd(np.array(a, dtype="float64"))
    want_u, want_s, want_vh = onp.linalg.svd(a, full_matrices=False)
    # NumPy's signs made Janus's: each right singular vector's largest component positive.
    flip = onp.sign(onp.take_along_axis(
        want_vh, onp.argmax(onp.abs(want_vh), axis=-1)[..., None], axis=-1))
    onp.testing.assert_allclose(s.asnumpy(), want_s, rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(vh.asnumpy(), want_vh * flip, rtol=1e-8, atol=1e-10)
    onp.testing.assert_allclose(u.asnumpy(), want_u * onp.swapaxes(flip, -1, -2), rtol=1e-8,
                                atol=1e-10)
    onp.testing.assert_allclose(np.linalg.svd(np.array(a), compute_uv=False).asnumpy(), want_s,
                                rtol=1e-5, atol=1e-6)
    fu, fs, fvh = np.linalg.svd(np.array(a, dtype="float64"), full_matrices=True)
    m, n = shape[-2:]
    assert fu.shape == shape[:-2] + (m, m) and fvh.shape == shape[:-2] + (n, n)
    rebuilt = onp.matmul(fu.asnumpy()[..., :, :min(m, n)] * fs.asnumpy()[..., None, :],
                         fvh.asnumpy()[..., :min(m, n), :])
    onp.testing.assert_allclose(rebuilt, a, rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(onp.matmul(onp.swapaxes(fu.asnumpy(), -1, -2), fu.asnumpy()),
                                onp.broadcast_to(onp.eye(m), fu.shape), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (5, 2), (2, 5), (2, 4, 3), (1, 1)])
def test_qr_equals_numpy(shape):
    a = onp.random.default_rng(5).normal(size=shape)
    q, r = np.linalg.qr(np.array(a, dtype="float64"))
    want_q, want_r = onp.linalg.qr(a)
    # NumPy's signs made Janus's: R's diagonal nonnegative.
    k = min(shape[-2:])
    flip = onp.sign(onp.diagonal(want_r[..., :k, :k], axis1=-2, axis2=-1))
    onp.testing.assert_allclose(r.asnumpy(), want_r * flip[..., :, None], rtol=1e-8, atol=1e-10)
    onp.testing.assert_allclose(q.asnumpy(), want_q * flip[..., None, :], rtol=1e-8, atol=1e-10)
    onp.testing.assert_allclose(np.linalg.qr(np.array(a), mode="r").asnumpy(),
                                want_r * flip[..., :, None], rtol=1e-5, atol=1e-5)
    cq, cr = np.linalg.qr(np.array(a, dtype="float64"), mode="complete")
    m = shape[-2]
    assert cq.shape == shape[:-2] + (m, m) and cr.shape == shape[:-2] + (m, shape[-1])
    onp.testing.assert_allclose(onp.matmul(cq.asnumpy(), cr.asnumpy()), a, rtol=1e-10,
                                atol=1e-12)
    onp.testing.assert_allclose(onp.matmul(onp.swapaxes(cq.asnumpy(), -1, -2), cq.asnumpy()),
                                onp.broadcast_to(onp.eye(m), cq.shape), atol=1e-12)


def test_pinv_lstsq_and_matrix_rank_equal_numpy():
    rng = onp.random.default_rng(2)
    a = rng.normal(size=(6, 3))
    deficient = a @ onp.diag([1.0, 1.0, 0.0]) @ rng.normal(size=(3, 4))  # rank 2, (6, 4)
    for m in (a, deficient, a.T, onp.zeros((2, 3))):
        onp.testing.assert_allclose(np.linalg.pinv(np.array(m, dtype="float64")).asnumpy(),
                                    onp.linalg.pinv(m), rtol=1e-8, atol=1e-10)
        assert int(np.linalg.matrix_rank(np.array(m, dtype="float64")).item()) == \
            onp.linalg.matrix_rank(m)
    stack = onp.stack([a, a @ onp.diag([1.0, 0.0, 1.0])])
    onp.testing.assert_array_equal(np.linalg.matrix_rank(np.array(stack)).asnumpy(), [3, 2])
    for b in (rng.normal(size=(6,)), rng.normal(size=(6, 2))):
        for m in (a, deficient):
            got = np.linalg.lstsq(np.array(m, dtype="float64"), np.array(b, dtype="float64"),
                                  rcond=None)
            want = onp.linalg.lstsq(m, b, rcond=None)
            onp.testing.assert_allclose(got[0].asnumpy(), want[0], rtol=1e-8, atol=1e-10)
            onp.testing.assert_allclose(got[1].asnumpy(), want[1], rtol=1e-8, atol=1e-10)
            assert int(got[2].item()) == want[2]
            onp.testing.assert_allclose(got[3].asnumpy(), want[3], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["eigh_of_sym", "svd", "nuclear", "pinv", "qr", "qr_wide"])
def test_gradients_match_finite_differences(name):
    rng = onp.random.default_rng(3)
    a0 = rng.normal(size=(2, 4, 3))
    probe = rng.normal(size=(2, 4, 4))

    def forward(a):
        if name == "eigh_of_sym":  # a symmetric input built from a: both triangles count
            w, v = np.linalg.eigh(np.matmul(a, a.transpose(0, 2, 1)))
            return (w * np.array(probe[:, 0])).sum() + (v * v * np.array(probe)).sum() + \
                (v[:, :, 3] * np.array(probe[:, 1])).sum()
        if name == "svd":
            u, s, vh = np.linalg.svd(a)
            return (u * np.array(probe[:, :, :3])).sum() + (s * s).sum() + \
                (vh * np.array(probe[:, :3, :3])).sum()
        if name in ("qr", "qr_wide"):
            q, r = np.linalg.qr(a if name == "qr" else a.transpose(0, 2, 1))
            return (q * np.array(probe[:, :q.shape[1], :q.shape[2]])).sum() + \
                (r * np.array(probe[:, :r.shape[1], :r.shape[2]])).sum()
        if name == "nuclear":
            return np.linalg.svd(a, compute_uv=False).sum()
        return (np.linalg.pinv(a) * np.array(probe[:, :3, :])).sum()

    assert_autograd_matches(forward, a0)


def test_a_hybridized_block_equals_its_imperative_calls():
    class Spectral(gluon.HybridBlock):
        def forward(self, x):
            s = np.linalg.svd(x, compute_uv=False)
            w, _ = np.linalg.eigh(np.matmul(x.transpose(0, 2, 1), x))
            return s * s - w[:, ::-1]

    x = np.array(onp.random.default_rng(4).normal(size=(2, 4, 3)))
    net = Spectral()
    want = net(x).asnumpy()
    assert onp.abs(want).max() < 1e-4
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_errors_name_the_input():
    with pytest.raises(ValueError, match=r"linalg.eigh: input has shape \(2, 3\), expected square "
                                         r"matrices"):
        np.linalg.eigh(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"linalg.eigvalsh: UPLO is 'X', expected 'L' or 'U'"):
        np.linalg.eigvalsh(np.ones((2, 2)), UPLO="X")
    with pytest.raises(ValueError, match=r"linalg.svd: input has shape \(3,\), expected matrices"):
        np.linalg.svd(np.ones((3,)))
    with pytest.raises(ValueError, match=r"linalg.qr: mode is 'raw', expected 'reduced', "
                                         r"'complete' or 'r'"):
        np.linalg.qr(np.ones((2, 2)), mode="raw")
    with pytest.raises(ValueError, match=r"linalg.lstsq: a has shape \(3, 2\) and b \(4,\)"):
        np.linalg.lstsq(np.ones((3, 2)), np.ones((4,)))
    with pytest.raises(ValueError, match=r"linalg_eigh: the eigenvalues of matrix 0 of the stack "
                                         r"\[2, 2\] did not converge"):
        np.linalg.eigvalsh(np.array([[onp.nan, 0.0], [0.0, 1.0]])).asnumpy()
    x = np.array(onp.ones((3, 2)))
    x.attach_grad()
    with autograd.record():
        s = np.linalg.svd(x, full_matrices=True)[1].sum()
    with pytest.raises(NotImplementedError, match=r"linalg_svd: no gradient with full_matrices "
                                                  r"for a non-square input \[3, 2\]"):
        s.backward()
