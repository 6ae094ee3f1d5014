"""np.einsum (janus/numpy/_einsum.py) against NumPy over many subscripts, its gradients against
central finite differences, through a hybridized block, and its messages for bad subscripts."""
import numpy as onp
import pytest

from janus import autograd, np

# (subscripts, operand shapes)
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(3, 3, 3)]),
    ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("i...->...", [(3, 2, 4)]),
    ("...i->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ab,cd,ef->abcdef", [(2, 2), (1, 3), (2, 1)]),
    ("ij,ij,ij->", [(3, 4), (3, 4), (3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ii,jj->ij", [(3, 3), (2, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bqhd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("ijk,k->ij", [(2, 3, 4), (4,)]),
    ("i,->i", [(3,), ()]),
    (",->", [(), ()]),
    ("iJ,Jk->ik", [(3, 4), (4, 2)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),
    ("ab,ba->", [(3, 4), (4, 3)]),
    ("abc,bca->b", [(2, 3, 4), (3, 4, 2)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ba,ac->", [(3, 2), (2, 4)]),
]


def _operands(shapes, seed=0):
    rs = onp.random.RandomState(seed)
    return [onp.asarray(rs.randn(*s), dtype=onp.float64) for s in shapes]


@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[c[0] for c in CASES])
def test_equals_numpy(subscripts, shapes):
    xs = _operands(shapes)
    want = onp.einsum(subscripts, *xs)
    got = np.einsum(subscripts, *[np.array(x, dtype="float64") for x in xs]).asnumpy()
    assert got.shape == want.shape
    onp.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_float32_and_optimize_accepted():
    xs = [x.astype(onp.float32) for x in _operands([(3, 4), (4, 5), (5, 2)])]
    for optimize in (False, True, "greedy", "optimal"):
        got = np.einsum("ij,jk,kl->il", *[np.array(x) for x in xs], optimize=optimize)
        assert got.dtype == onp.float32
        onp.testing.assert_allclose(got.asnumpy(), onp.einsum("ij,jk,kl->il", *xs),
                                    rtol=1e-5, atol=1e-5)


GRAD_CASES = ["ij,jk->ik", "ii->i", "ii", "bij,bjk->bik", "...ij,...jk->...ik", "i,j->ij",
              "ij,jk,kl->il", "iij->ji", "ij->"]
GRAD_SHAPES = {
    "ij,jk->ik": [(2, 3), (3, 2)], "ii->i": [(3, 3)], "ii": [(3, 3)],
    "bij,bjk->bik": [(2, 2, 3), (2, 3, 2)], "...ij,...jk->...ik": [(2, 1, 2, 3), (2, 3, 2)],
    "i,j->ij": [(3,), (2,)], "ij,jk,kl->il": [(2, 3), (3, 2), (2, 2)],
    "iij->ji": [(2, 2, 3)], "ij->": [(2, 3)],
}


@pytest.mark.parametrize("subscripts", GRAD_CASES)
def test_gradients_match_finite_differences(subscripts):
    """d/dx of sum(einsum(...) * w) for a fixed random w, against central differences in
    float64 (step 1e-6: the loss is polynomial, so the error is at rounding level)."""
    xs = _operands(GRAD_SHAPES[subscripts], seed=1)
    w = onp.random.RandomState(2).randn(*onp.einsum(subscripts, *xs).shape)

    def loss(values):
        return float((onp.einsum(subscripts, *values) * w).sum())

    arrays = [np.array(x, dtype="float64") for x in xs]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        y = (np.einsum(subscripts, *arrays) * np.array(w, dtype="float64")).sum()
    y.backward()
    h = 1e-6
    for k, x in enumerate(xs):
        numeric = onp.zeros_like(x)
        for idx in onp.ndindex(*x.shape):
            up = [v.copy() for v in xs]
            down = [v.copy() for v in xs]
            up[k][idx] += h
            down[k][idx] -= h
            numeric[idx] = (loss(up) - loss(down)) / (2 * h)
        onp.testing.assert_allclose(arrays[k].grad.asnumpy(), numeric, rtol=1e-6, atol=1e-7)


def test_hybridized_block_equals_imperative():
    from janus.gluon import nn

    class Attention(nn.HybridBlock):
        def forward(self, q, k, v):
            scores = np.einsum("bqd,bkd->bqk", q, k)
            diag = np.einsum("...ii->...i", scores)  # [b, 3]
            return np.einsum("bqk,bkd->bqd", scores, v) + np.einsum("bq,d->bqd", diag, v[0, 0])

    rs = onp.random.RandomState(4)
    q, k, v = (np.array(rs.randn(2, 3, 4).astype(onp.float32)) for _ in range(3))
    net = Attention()
    want = net(q, k, v).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(q, k, v).asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(net(q, k, v).asnumpy(), want, rtol=1e-5, atol=1e-6)
    q.attach_grad()
    with autograd.record():
        y = net(q, k, v).sum()
    y.backward()
    assert q.grad.shape == (2, 3, 4) and onp.abs(q.grad.asnumpy()).sum() > 0


@pytest.mark.parametrize("subscripts,shapes,message", [
    ("ij,jk->ik", [(3, 4)], "'ij,jk->ik' name 2 operand\\(s\\), but 1 were given"),
    ("ij,jk->ik", [(3, 4), (5, 6)], "label 'j' has extent 4 in one place and 5 in operand 1"),
    ("ijk", [(3, 4)], "operand 0 \\('ijk'\\) names 3 axes, but it has 2"),
    ("i1,j", [(3, 4), (2,)], "operand 0 \\('i1'\\) has the character '1'"),
    ("ij->iz", [(3, 4)], "the output label 'z' appears in no operand"),
    ("ij->ii", [(3, 4)], "the output repeats the label 'i'"),
    ("ij->i->j", [(3, 4)], "more than one '->'"),
    ("i.j", [(3, 4)], "'.' that is not part of an ellipsis"),
    ("......i", [(3, 4)], "more than one ellipsis"),
    ("...ij->ij", [(2, 3, 4)], "1 axes under '...', but the output has no '...'"),
    ("ij-jk", [(3, 4)], "'-' or '>' outside '->'"),
    ("ij->i,j", [(3, 4)], "the output \\(after '->'\\) has a ','"),
    ("ij...,j", [(3,), (3,)], "names 2 axes, but it has only 1"),
])
def test_bad_subscripts_are_named(subscripts, shapes, message):
    arrays = [np.zeros(s) for s in shapes]
    with pytest.raises(ValueError, match=message):
        np.einsum(subscripts, *arrays)


@pytest.mark.parametrize("subscripts,shapes",
                         [c for c in CASES if c[0].count(",") >= 2],
                         ids=[c[0] for c in CASES if c[0].count(",") >= 2])
def test_optimize_orders_the_pairs_and_changes_no_number(subscripts, shapes):
    xs = _operands(shapes, seed=5)
    got = np.einsum(subscripts, *[np.array(x, dtype="float64") for x in xs], optimize=True)
    onp.testing.assert_allclose(got.asnumpy(), onp.einsum(subscripts, *xs), rtol=1e-10,
                                atol=1e-12)


def test_optimize_contracts_the_smallest_pair_first(monkeypatch):
    """'ij,jk,k->i' over [30, 40], [40, 50], [50]: from the left the first product is [30, 50];
    the greedy order contracts jk,k first ([40]), then ij with it ([30])."""
    from janus.numpy import _einsum
    seen = []
    original = _einsum._contract

    def record(a, la, b, lb, keep):
        y, labels = original(a, la, b, lb, keep)
        seen.append(tuple(y.shape))
        return y, labels

    monkeypatch.setattr(_einsum, "_contract", record)
    xs = _operands([(30, 40), (40, 50), (50,)], seed=6)
    arrays = [np.array(x, dtype="float64") for x in xs]
    want = onp.einsum("ij,jk,k->i", *xs)
    onp.testing.assert_allclose(np.einsum("ij,jk,k->i", *arrays).asnumpy(), want, rtol=1e-10)
    assert seen == [(30, 50), (30,)]
    seen.clear()
    onp.testing.assert_allclose(np.einsum("ij,jk,k->i", *arrays, optimize="greedy").asnumpy(),
                                want, rtol=1e-10)
    assert seen == [(40,), (30,)]


def test_interleaved_sublists():
    xs = _operands([(3, 4), (4, 5), (2, 3, 3)], seed=7)
    a, b, c = (np.array(x, dtype="float64") for x in xs)
    for got, want in [
        (np.einsum(a, [0, 1], b, [1, 2], [2, 0]), onp.einsum(xs[0], [0, 1], xs[1], [1, 2], [2, 0])),
        (np.einsum(a, [0, 1], b, [1, 2]), onp.einsum(xs[0], [0, 1], xs[1], [1, 2])),
        (np.einsum(c, [Ellipsis, 0, 0], [Ellipsis, 0]), onp.einsum(xs[2], [Ellipsis, 0, 0],
                                                                   [Ellipsis, 0])),
    ]:
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"the sublist of operand 1 has the label 'x'"):
        np.einsum(a, [0, 1], b, [1, "x"])


def test_integer_and_half_operands_keep_their_dtype():
    a = onp.arange(12, dtype=onp.int64).reshape(3, 4)
    b = onp.arange(20, dtype=onp.int64).reshape(4, 5)
    got = np.einsum("ij,jk->ik", np.array(a, dtype="int64"), np.array(b, dtype="int64"))
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), a @ b)
    h = np.einsum("i,i->", np.array([1.0, 2.0], dtype="float16"),
                  np.array([3.0, 4.0], dtype="float16"))
    assert h.dtype == onp.float16 and float(h) == 11.0
