"""gluon.rnn's BidirectionalCell, DropoutCell, ResidualCell and ZoneoutCell, the LSTM's
projection_size, state clipping and use_sequence_length, and gluon.loss's CTCLoss and SDMLLoss:
against numbers MXNet 1.9.1 computed (tests/fixtures/mxnet/rnn/extra, made by
make_rnn_fixtures.py), against float64 NumPy references where MXNet's CPU build cannot say
(it ignores state clipping and sequence_length), gradients against finite differences,
hybridize against imperative, export and imports, and the errors."""
import os

import numpy as onp
import pytest

from janus import autograd, gluon, np
from janus.gluon import loss, rnn

EXTRA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet", "rnn",
                     "extra")


def fixture(name):
    return onp.load(os.path.join(EXTRA, name + ".npz"))


def sigmoid(v):
    return 1 / (1 + onp.exp(-v))


def randomize(block, seed, scale=0.6):
    rng = onp.random.RandomState(seed)
    for p in block.collect_params().values():
        p.set_data(np.array(rng.uniform(-scale, scale, size=p.shape).astype(onp.float32)))


# ---- against MXNet 1.9.1 ----

def test_lstm_projection_gives_mxnets_numbers():
    d = fixture("lstmp_2layers_bidirectional")
    layer = rnn.LSTM(5, num_layers=2, bidirectional=True, projection_size=3, input_size=3)
    assert layer.l1_h2r_weight.shape == (3, 5)
    assert layer.l1_i2h_weight.shape == (20, 6) and layer.l0_h2h_weight.shape == (20, 3)
    assert [s.shape for s in layer.begin_state(2)] == [(4, 2, 3), (4, 2, 5)]
    layer.load_parameters(os.path.join(EXTRA, "lstmp_2layers_bidirectional.params"))
    out, final = layer(np.array(d["x"]), [np.array(d["state0"]), np.array(d["state1"])])
    onp.testing.assert_allclose(out.asnumpy(), d["out"], rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(final[0].asnumpy(), d["final0"], rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(final[1].asnumpy(), d["final1"], rtol=1e-5, atol=1e-6)


def sequential_cells():
    s = rnn.HybridSequentialRNNCell()
    s.add(rnn.LSTMCell(4, input_size=3))
    s.add(rnn.DropoutCell(0.5))
    s.add(rnn.ResidualCell(rnn.GRUCell(4, input_size=4)))
    s.add(rnn.ZoneoutCell(rnn.RNNCell(3, input_size=4), 0.3, 0.3))
    return s


def bidirectional_stack():
    s = rnn.SequentialRNNCell()
    s.add(rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=3), rnn.GRUCell(2, input_size=3)))
    s.add(rnn.LSTMCell(4, input_size=5))
    return s


CELLS = {
    "bidirectional_cell": (lambda: rnn.BidirectionalCell(rnn.LSTMCell(4, input_size=3),
                                                         rnn.GRUCell(3, input_size=3)), "NTC"),
    "residual_cell": (lambda: rnn.ResidualCell(rnn.GRUCell(3, input_size=3)), "TNC"),
    "zoneout_cell": (lambda: rnn.ZoneoutCell(rnn.LSTMCell(4, input_size=3), 0.5, 0.5), "NTC"),
    "sequential_cells": (sequential_cells, "TNC"),
    "bidirectional_stack": (bidirectional_stack, "NTC"),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_cells_give_mxnets_numbers_and_parameter_names(name):
    """Unrolled outside training (dropout and zoneout then leave the base cells' numbers)."""
    make, layout = CELLS[name]
    d = fixture(name)
    cell = make()
    cell.load_parameters(os.path.join(EXTRA, name + ".params"))  # MXNet's structural names
    states = [np.array(d[f"state{k}"]) for k in range(len(cell.begin_state(2)))]
    out, final = cell.unroll(5, np.array(d["x"]), states, layout=layout, merge_outputs=True)
    onp.testing.assert_allclose(out.asnumpy(), d["out"], rtol=1e-5, atol=1e-6)
    assert len(final) == len(states)
    for k, f in enumerate(final):
        onp.testing.assert_allclose(f.asnumpy(), d[f"final{k}"], rtol=1e-5, atol=1e-6)
    # Unmerged: a list of steps with the same numbers.
    steps, _ = cell.unroll(5, np.array(d["x"]), states, layout=layout, merge_outputs=False)
    assert isinstance(steps, list) and len(steps) == 5
    t_axis = 1 if layout == "NTC" else 0
    onp.testing.assert_allclose(steps[2].asnumpy(), d["out"].take(2, axis=t_axis), rtol=1e-5,
                                atol=1e-6)


def test_modifier_cells_name_parameters_as_mxnet():
    bi = rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=2), rnn.GRUCell(3, input_size=2))
    assert list(bi.collect_params().keys()) == [
        "l_cell.i2h_weight", "l_cell.h2h_weight", "l_cell.i2h_bias", "l_cell.h2h_bias",
        "r_cell.i2h_weight", "r_cell.h2h_weight", "r_cell.i2h_bias", "r_cell.h2h_bias"]
    z = rnn.ZoneoutCell(rnn.LSTMCell(3, input_size=2), 0.5, 0.5)
    assert sorted(z.collect_params().keys()) == [
        "base_cell.h2h_bias", "base_cell.h2h_weight", "base_cell.i2h_bias",
        "base_cell.i2h_weight"]
    assert len(bi.begin_state(2)) == 3 and len(z.begin_state(2)) == 2
    assert rnn.DropoutCell(0.5).begin_state(2) == []


@pytest.mark.parametrize("key,layout,label_layout", [("padded", "NTC", "NT"),
                                                     ("lengths", "NTC", "NT"),
                                                     ("tnc", "TNC", "TN")])
@pytest.mark.parametrize("hybridize", [False, True])
def test_ctc_loss_and_gradient_give_mxnets_numbers(key, layout, label_layout, hybridize):
    d = fixture("ctc_loss")
    pred = np.array(d["pred"] if layout == "NTC" else d["pred"].transpose(1, 0, 2))
    label = np.array(d["label"] if label_layout == "NT" else d["label"].T)
    pred.attach_grad()
    fn = loss.CTCLoss(layout=layout, label_layout=label_layout)
    if hybridize:
        fn.hybridize()
    with autograd.record():
        out = fn(pred, label) if key == "padded" else \
            fn(pred, label, np.array(d["pred_lengths"]), np.array(d["label_lengths"]))
    out.backward()
    onp.testing.assert_allclose(out.asnumpy(), d[key + "_loss"], rtol=1e-5)
    onp.testing.assert_allclose(pred.grad.asnumpy(), d[key + "_grad"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybridize", [False, True])
def test_sdml_loss_and_gradient_give_mxnets_numbers(hybridize):
    d = fixture("sdml_loss")
    x1, x2 = np.array(d["x1"]), np.array(d["x2"])
    x1.attach_grad()
    x2.attach_grad()
    fn = loss.SDMLLoss(smoothing_parameter=0.2)
    if hybridize:
        fn.hybridize()
    with autograd.record():
        out = fn(x1, x2)
    out.backward()
    onp.testing.assert_allclose(out.asnumpy(), d["loss"], rtol=1e-5)
    onp.testing.assert_allclose(x1.grad.asnumpy(), d["grad1"], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(x2.grad.asnumpy(), d["grad2"], rtol=1e-4, atol=1e-5)


# ---- CTC against a float64 enumeration of every alignment ----

def ctc_by_enumeration(logits, label):
    """-log of the summed probability of every path over T steps that collapses (repeats
    merged, blanks C - 1 dropped) to label."""
    t_len, c = logits.shape
    lp = logits - onp.log(onp.exp(logits).sum(1, keepdims=True))
    total = 0.0
    for path in onp.ndindex(*([c] * t_len)):
        collapsed = [k for i, k in enumerate(path) if k != c - 1 and (i == 0 or path[i - 1] != k)]
        if collapsed == list(label):
            total += onp.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -onp.log(total)


def test_ctc_loss_equals_the_sum_over_alignments_and_repeats_need_a_blank():
    rng = onp.random.RandomState(1)
    logits = rng.normal(size=(2, 5, 3)).astype(onp.float32)  # N, T, C: classes 0, 1; blank 2
    labels = [[0, 0], [1, 0, 1]]
    got = loss.CTCLoss()(np.array(logits), np.array([[0, 0, -1], [1, 0, 1]])).asnumpy()
    for n in range(2):
        onp.testing.assert_allclose(got[n], ctc_by_enumeration(logits[n].astype(onp.float64),
                                                               labels[n]), rtol=1e-5)
    # 'aa' in 2 steps needs a blank between: no alignment, a loss of 0 and no gradient, as
    # MXNet 1.9.1 gives.
    d = fixture("ctc_loss")
    pred = np.array(d["pred"][:2, :2])
    pred.attach_grad()
    with autograd.record():
        short = loss.CTCLoss()(pred, np.array([[0, 0], [1, -1]]))
    short.backward()
    assert short.asnumpy()[0] == 0 and d["short_loss"][0] == 0
    onp.testing.assert_allclose(short.asnumpy(), d["short_loss"], rtol=1e-5)
    # MXNet leaves the impossible sequence's gradient unwritten (garbage); Janus's is zero.
    assert (pred.grad.asnumpy()[0] == 0).all()
    onp.testing.assert_allclose(pred.grad.asnumpy()[1], d["short_grad"][1], rtol=1e-4,
                                atol=1e-6)


def test_ctc_loss_weights_and_errors():
    pred = np.random.normal(0, 1, (2, 4, 3))
    label = np.array([[0, 1], [1, -1]])
    base = loss.CTCLoss()(pred, label).asnumpy()
    onp.testing.assert_allclose(loss.CTCLoss(weight=0.5)(pred, label).asnumpy(), 0.5 * base,
                                rtol=1e-6)
    weighted = loss.CTCLoss()(pred, label, sample_weight=np.array([1.0, 3.0])).asnumpy()
    onp.testing.assert_allclose(weighted, base * [1, 3], rtol=1e-6)
    with pytest.raises(ValueError, match=r"ctc_loss: label 2 at \[0, 1\] is out of range, "
                                         r"expected a class in \[0, 2\) \(class 2 is the blank\)"):
        loss.CTCLoss()(pred, np.array([[0, 2], [1, -1]])).asnumpy()
    with pytest.raises(ValueError, match=r"ctc_loss: data length 5 of sequence 1 is not a whole "
                                         r"number in \[0, 4\]"):
        loss.CTCLoss()(pred, label, np.array([4, 5]), np.array([2, 1])).asnumpy()
    with pytest.raises(ValueError, match="layout 'NCT' is not supported"):
        loss.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match=r"expected pred \(N, T, C\)"):
        loss.CTCLoss()(np.ones((2, 3)), label)


def test_sdml_loss_errors():
    with pytest.raises(ValueError, match=r"SDMLLoss: x1 has shape \(2, 3\) and x2 \(3, 3\)"):
        loss.SDMLLoss()(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="at least 2 pairs"):
        loss.SDMLLoss()(np.ones((1, 3)), np.ones((1, 3)))


# ---- the LSTM options against float64 NumPy ----

def np_lstm(params, num_layers, bidirectional, x, h0, c0, lengths=None, proj=False,
            clip=None, clip_nan=False):
    """x [T, N, C]; params by name; lengths: sequence n is valid for lengths[n] steps (zeros
    out after, states from its last valid step, the reverse direction over the valid steps)."""
    t_len, n = x.shape[:2]
    lengths = [t_len] * n if lengths is None else lengths
    dirs = 2 if bidirectional else 1
    h_t, c_t = h0.astype(onp.float64).copy(), c0.astype(onp.float64).copy()
    seq = x.astype(onp.float64)
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            p = f"{'lr'[d]}{layer}_"

            def w(k):
                return params[p + k].data().asnumpy().astype(onp.float64)
            s = layer * dirs + d
            width = h0.shape[2]
            out = onp.zeros((t_len, n, width))
            for b in range(n):
                h, c = h0[s, b].astype(onp.float64), c0[s, b].astype(onp.float64)
                steps = range(lengths[b] - 1, -1, -1) if d == 1 else range(lengths[b])
                for t in steps:
                    g = seq[t, b] @ w("i2h_weight").T + w("i2h_bias") + h @ w("h2h_weight").T \
                        + w("h2h_bias")
                    i, f, gg, o = onp.split(g, 4)
                    c = sigmoid(f) * c + sigmoid(i) * onp.tanh(gg)
                    if clip is not None:
                        nan = onp.isnan(c)
                        c = onp.clip(c, *clip)
                        if clip_nan:
                            c[nan] = clip[0]
                    h = sigmoid(o) * onp.tanh(c)
                    if proj:
                        h = w("h2r_weight") @ h
                    out[t, b] = h
                h_t[s, b], c_t[s, b] = h, c
            outs.append(out)
        seq = onp.concatenate(outs, axis=2)
    return seq, h_t, c_t


def lstm_case(layout="TNC", **kw):
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, layout=layout, **kw)
    layer.initialize()
    randomize(layer, 11)
    rng = onp.random.RandomState(12)
    x = rng.normal(size=(5, 3, 3)).astype(onp.float32)  # T, N, C
    states = [rng.uniform(-0.5, 0.5, size=s.shape).astype(onp.float32)
              for s in layer.begin_state(3)]
    return layer, x, states


@pytest.mark.parametrize("proj", [False, True])
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_sequence_length_zeroes_padding_and_takes_the_last_valid_states(proj, layout):
    layer, x, states = lstm_case(layout, use_sequence_length=True,
                                 projection_size=2 if proj else None)
    lengths = [5, 2, 3]
    xin = x if layout == "TNC" else x.transpose(1, 0, 2)
    out, final = layer(np.array(xin), [np.array(s) for s in states],
                       sequence_length=np.array(lengths, dtype="int32"))
    want, h_t, c_t = np_lstm(layer.collect_params(), 2, True, x, *states, lengths=lengths,
                             proj=proj)
    got = out.asnumpy() if layout == "TNC" else out.asnumpy().transpose(1, 0, 2)
    onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert (got[2:, 1] == 0).all() and (got[3:, 2] == 0).all()
    onp.testing.assert_allclose(final[0].asnumpy(), h_t, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(final[1].asnumpy(), c_t, rtol=1e-5, atol=1e-6)
    # Full lengths give the layer without sequence_length.
    plain = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, layout=layout,
                     projection_size=2 if proj else None)
    plain.initialize()
    for k, p in layer.collect_params().items():
        plain.collect_params()[k].set_data(p.data())
    full, _ = layer(np.array(xin), [np.array(s) for s in states],
                    sequence_length=np.array([5, 5, 5]))
    want_full, _ = plain(np.array(xin), [np.array(s) for s in states])
    onp.testing.assert_allclose(full.asnumpy(), want_full.asnumpy(), rtol=1e-6, atol=1e-7)


def test_state_clipping_and_nan():
    layer, x, states = lstm_case(state_clip_min=-0.2, state_clip_max=0.25)
    randomize(layer, 13, scale=2.0)  # large weights: the cell state leaves [-0.2, 0.25]
    out, (h, c) = layer(np.array(x), [np.array(s) for s in states])
    want, h_t, c_t = np_lstm(layer.collect_params(), 2, True, x, *states, clip=(-0.2, 0.25))
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(c.asnumpy(), c_t, rtol=1e-5, atol=1e-6)
    assert c.asnumpy().max() == pytest.approx(0.25) and c.asnumpy().min() == pytest.approx(-0.2)
    # A NaN in the input: propagates into c, or becomes state_clip_min with state_clip_nan.
    x_nan = x.copy()
    x_nan[-1, 0, 0] = onp.nan
    one = [np.array(s[:2]) for s in states]  # the forward direction of layer 0 only
    for clip_nan in (False, True):
        lstm = rnn.LSTM(4, input_size=3, state_clip_min=-0.2, state_clip_max=0.25,
                        state_clip_nan=clip_nan)
        lstm.initialize()
        randomize(lstm, 14)
        _, (_, c1) = lstm(np.array(x_nan), [o[:1] for o in one])
        if clip_nan:
            onp.testing.assert_array_equal(c1.asnumpy()[0, 0], onp.full(4, -0.2, onp.float32))
        else:
            assert onp.isnan(c1.asnumpy()[0, 0]).all()
        assert not onp.isnan(c1.asnumpy()[0, 1:]).any()


def finite_difference_check(fn, arrays, seed, eps=1e-2, rtol=2e-2, atol=2e-3):
    """The gradient of sum(fn(*arrays) * r) (r random) against central differences, in
    float32 (Janus's recurrent layers compute in float32)."""
    rng = onp.random.RandomState(seed)
    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    r = rng.normal(size=y.shape).astype(onp.float32)
    with autograd.record():
        total = (fn(*xs) * np.array(r)).sum()
    total.backward()
    for x, a in zip(xs, arrays):
        grad = x.grad.asnumpy()
        for _ in range(6):
            idx = tuple(rng.randint(0, s) for s in a.shape)
            plus, minus = a.copy(), a.copy()
            plus[idx] += eps
            minus[idx] -= eps
            f_plus = (fn(*[np.array(plus if b is a else b) for b in arrays]).asnumpy() * r).sum()
            f_minus = (fn(*[np.array(minus if b is a else b) for b in arrays]).asnumpy()
                       * r).sum()
            numeric = (float(f_plus) - float(f_minus)) / (2 * eps)
            assert grad[idx] == pytest.approx(numeric, rel=rtol, abs=atol), (idx, grad[idx],
                                                                              numeric)


def test_gradients_of_the_new_pieces_match_finite_differences():
    layer, x, states = lstm_case(use_sequence_length=True, projection_size=2,
                                 state_clip_min=-0.5, state_clip_max=0.5)
    lengths = np.array([5, 2, 3])
    finite_difference_check(lambda v, h, c: layer(v, [h, c], sequence_length=lengths)[0],
                            [x, *states], seed=1)
    bi = rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=3), rnn.GRUCell(2, input_size=3))
    bi.initialize()
    randomize(bi, 15)
    finite_difference_check(lambda v: bi.unroll(5, v, layout="TNC", merge_outputs=True)[0],
                            [x], seed=2)
    res = rnn.ResidualCell(rnn.GRUCell(3, input_size=3))
    res.initialize()
    randomize(res, 16)
    finite_difference_check(lambda v: res.unroll(5, v, layout="TNC", merge_outputs=True)[0],
                            [x], seed=3)
    pred = onp.random.RandomState(4).normal(size=(2, 5, 4)).astype(onp.float32)
    ctc = loss.CTCLoss()
    label = np.array([[0, 1, 1], [2, -1, -1]])
    finite_difference_check(lambda p: ctc(p, label), [pred], seed=5)
    sdml = loss.SDMLLoss()
    a = onp.random.RandomState(6).normal(size=(3, 4)).astype(onp.float32)
    finite_difference_check(lambda u, v: sdml(u, v), [a, a[::-1].copy()], seed=7)


def test_hybridize_export_and_imports_with_projection_and_sequence_length(tmp_path):
    layer, x, states = lstm_case("NTC", use_sequence_length=True, projection_size=2)
    xin = np.array(x.transpose(1, 0, 2))
    st = [np.array(s) for s in states]
    lengths = np.array([5, 2, 3], dtype="float32")
    out, final = layer(xin, st, sequence_length=lengths)
    layer.hybridize()
    hout, hfinal = layer(xin, st, sequence_length=lengths)
    onp.testing.assert_allclose(hout.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(hfinal[0].asnumpy(), final[0].asnumpy(), rtol=1e-5, atol=1e-6)
    # Other lengths through the same graph.
    other, _ = layer(xin, st, sequence_length=np.array([1, 4, 5], dtype="float32"))
    assert (other.asnumpy()[0, 1:] == 0).all() and (other.asnumpy()[1, 4:] == 0).all()
    sym, params = layer.export(str(tmp_path / "lstmp"))
    imported = gluon.SymbolBlock.imports(sym, ["data0", "data1", "data2", "data3"], params)
    ys = imported(xin, *st, lengths)
    for got, want in zip(ys, [hout] + hfinal):
        onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)


# ---- cells in training ----

def test_dropout_and_zoneout_cells_in_training():
    x = np.ones((50, 40))
    with autograd.train_mode():
        y, states = rnn.DropoutCell(0.5)(x, [])
    v = y.asnumpy()
    assert states == [] and set(onp.unique(v)) <= {0.0, 2.0} and 0.3 < (v == 0).mean() < 0.7
    assert (rnn.DropoutCell(0.5)(x, [])[0].asnumpy() == 1).all()  # outside training

    base = rnn.LSTMCell(6, input_size=4)
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    cell.initialize()
    randomize(cell, 17)
    xs = np.random.normal(0, 1, (40, 3, 4))  # N, T, C
    begin = [s + 0.3 for s in cell.begin_state(40)]
    with autograd.train_mode():
        out, final = cell.unroll(3, xs, begin, layout="NTC", merge_outputs=True)
    out = out.asnumpy()
    # Step 0: each output element is the base cell's or the zeros before the first step.
    fresh, fresh_states = base(xs[:, 0], begin)
    kept_new = onp.isclose(out[:, 0], fresh.asnumpy())
    assert (kept_new | (out[:, 0] == 0)).all() and 0.3 < kept_new.mean() < 0.7
    # About half of step 1's outputs repeat step 0's (a fresh value equal to it has no chance).
    assert 0.3 < (out[:, 1] == out[:, 0]).mean() < 0.7
    for k in range(2):
        assert onp.isfinite(final[k].asnumpy()).all()
    with autograd.predict_mode():
        plain, _ = cell.unroll(3, xs, begin, layout="NTC", merge_outputs=True)
        want, _ = base.unroll(3, xs, begin, layout="NTC", merge_outputs=True)
    onp.testing.assert_allclose(plain.asnumpy(), want.asnumpy(), rtol=1e-6)


def test_cell_errors():
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, input_size=2), rnn.GRUCell(3, input_size=2))
    bi.initialize()
    with pytest.raises(NotImplementedError, match="cannot be stepped; use unroll"):
        bi(np.ones((2, 2)), bi.begin_state(2))
    with pytest.raises(ValueError, match="BidirectionalCell cannot be stepped, so it takes no "
                                         "zoneout"):
        rnn.ZoneoutCell(bi, 0.5)
    with pytest.raises(TypeError, match="ResidualCell: expected a recurrent cell"):
        rnn.ResidualCell(gluon.nn.Dense(3))
    res = rnn.ResidualCell(rnn.GRUCell(3, input_size=2))
    res.initialize()
    with pytest.raises(ValueError, match=r"the base cell's output has shape \[2, 3\] and its "
                                         r"input \[2, 2\]"):
        res.unroll(2, np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=r"rate is 1\.5, expected a value in \[0, 1\)"):
        rnn.DropoutCell(1.5)
    with pytest.raises(ValueError, match="unroll got 1 states, expected 2"):
        bi.unroll(3, np.ones((2, 3, 2)), [np.zeros((2, 3))])


def test_layer_option_errors():
    with pytest.raises(ValueError, match="projection_size 4 must be smaller than hidden_size 4"):
        rnn.LSTM(4, projection_size=4)
    with pytest.raises(ValueError, match="state_clip_min and state_clip_max must be given "
                                         "together"):
        rnn.LSTM(4, state_clip_min=-1)
    lstm = rnn.LSTM(4, input_size=3, use_sequence_length=True)
    lstm.initialize()
    with pytest.raises(ValueError, match="use_sequence_length=True, expected a sequence_length"):
        lstm(np.ones((5, 2, 3)))
    with pytest.raises(ValueError, match=r"sequence_length has shape \[3\], expected \[2\]"):
        lstm(np.ones((5, 2, 3)), sequence_length=np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="sequence_length given but use_sequence_length=False"):
        rnn.GRU(4)(np.ones((5, 2, 3)), sequence_length=np.array([1, 2]))


@pytest.mark.parametrize("name", sorted(CELLS))
def test_hybridized_cells_unroll_as_imperative(name):
    make, layout = CELLS[name]
    cell = make()
    cell.initialize()
    randomize(cell, 18)
    x = np.random.normal(0, 1, (2, 5, 3) if layout == "NTC" else (5, 2, 3))
    want, want_states = cell.unroll(5, x, layout=layout, merge_outputs=True)
    cell.hybridize()
    got, got_states = cell.unroll(5, x, layout=layout, merge_outputs=True)
    onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)
    for g, w in zip(got_states, want_states):
        onp.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-6, atol=1e-7)


def test_a_hybridized_zoneout_cell_refuses_single_steps_in_training_but_unrolls():
    cell = rnn.ZoneoutCell(rnn.GRUCell(3, input_size=2), zoneout_outputs=0.5)
    cell.initialize()
    cell.hybridize()
    with autograd.train_mode():
        out, _ = cell.unroll(4, np.ones((2, 4, 2)), layout="NTC", merge_outputs=True)
        assert out.shape == (2, 4, 3)
        with pytest.raises(NotImplementedError, match="cannot be stepped in training"):
            cell(np.ones((2, 2)), cell.begin_state(2))
