"""gluon.rnn: RNN, LSTM, GRU and their cells against a plain NumPy implementation with the same
weights, against files saved by MXNet 1.9.1 (tests/fixtures/mxnet/rnn), states in and out,
hybridize and export, training a tiny sequence task, and the errors."""
import os

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, init, np
from janus.gluon import rnn

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet", "rnn")


def sigmoid(v):
    return 1 / (1 + onp.exp(-v))


def np_step(mode, w, x, h, c):
    """One step for a batch: x [N, C], h and c [N, H]; w = (wi, wh, bi, bh) as MXNet stores
    them. Returns (h', c')."""
    wi, wh, bi, bh = w
    xi = x @ wi.T + bi
    hh = h @ wh.T + bh
    if mode == "rnn_relu":
        return onp.maximum(xi + hh, 0), c
    if mode == "rnn_tanh":
        return onp.tanh(xi + hh), c
    if mode == "lstm":
        i, f, g, o = onp.split(xi + hh, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * onp.tanh(g)
        return sigmoid(o) * onp.tanh(c), c
    xr, xz, xn = onp.split(xi, 3, axis=1)
    hr, hz, hn = onp.split(hh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = onp.tanh(xn + r * hn)
    return (1 - z) * n + z * h, c


def np_layer(mode, params, num_layers, bidirectional, x, h0, c0):
    """A layer stack over x [T, N, C]; params by MXNet's names. Returns (out, hT, cT)."""
    dirs = 2 if bidirectional else 1
    hT, cT = h0.copy(), c0.copy()
    seq = x.astype(onp.float64)
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            p = f"{'lr'[d]}{layer}_"
            w = tuple(params[p + k].data().asnumpy().astype(onp.float64)
                      for k in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"))
            s = layer * dirs + d
            h, c = h0[s].astype(onp.float64), c0[s].astype(onp.float64)
            out = [None] * len(seq)
            steps = range(len(seq) - 1, -1, -1) if d == 1 else range(len(seq))
            for t in steps:
                h, c = np_step(mode, w, seq[t], h, c)
                out[t] = h
            outs.append(onp.stack(out))
            hT[s], cT[s] = h, c
        seq = onp.concatenate(outs, axis=2)
    return seq, hT, cT


def make_layer(mode, hidden, **kw):
    if mode == "lstm":
        return rnn.LSTM(hidden, **kw)
    if mode == "gru":
        return rnn.GRU(hidden, **kw)
    return rnn.RNN(hidden, activation=mode[4:], **kw)


def randomize(block, seed):
    rng = onp.random.RandomState(seed)
    for p in block.collect_params().values():
        p.set_data(np.array(rng.uniform(-0.6, 0.6, size=p.shape).astype(onp.float32)))


@pytest.mark.parametrize("mode", ["rnn_relu", "rnn_tanh", "lstm", "gru"])
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
def test_layer_matches_numpy_with_states_in_and_out(mode, num_layers, bidirectional):
    layer = make_layer(mode, 4, num_layers=num_layers, bidirectional=bidirectional)
    layer.initialize()
    rng = onp.random.RandomState(1)
    x = rng.normal(size=(5, 3, 2)).astype(onp.float32)
    y = layer(np.array(x))  # infers input_size = 2
    dirs = 2 if bidirectional else 1
    assert y.shape == (5, 3, 4 * dirs)
    randomize(layer, 2)
    states = layer.begin_state(batch_size=3)
    assert len(states) == (2 if mode == "lstm" else 1)
    assert all(s.shape == (num_layers * dirs, 3, 4) for s in states)
    given = [np.array(rng.uniform(-0.5, 0.5, size=s.shape).astype(onp.float32))
             for s in states]
    out, final = layer(np.array(x), given)
    assert isinstance(final, list) and len(final) == len(given)
    h0 = given[0].asnumpy()
    c0 = given[1].asnumpy() if mode == "lstm" else onp.zeros_like(h0)
    want, hT, cT = np_layer(mode, layer.collect_params(), num_layers, bidirectional, x, h0, c0)
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-5)
    onp.testing.assert_allclose(final[0].asnumpy(), hT, rtol=1e-5, atol=1e-5)
    if mode == "lstm":
        onp.testing.assert_allclose(final[1].asnumpy(), cT, rtol=1e-5, atol=1e-5)
    # Without states: zeros in, only the output out.
    zero_out, _, _ = np_layer(mode, layer.collect_params(), num_layers, bidirectional, x,
                              onp.zeros_like(h0), onp.zeros_like(h0))
    onp.testing.assert_allclose(layer(np.array(x)).asnumpy(), zero_out, rtol=1e-5, atol=1e-5)


def test_parameter_names_layout_and_single_state_array():
    lstm = rnn.LSTM(3, num_layers=2, bidirectional=True)
    assert list(lstm.collect_params().keys())[:5] == [
        "l0_i2h_weight", "l0_h2h_weight", "l0_i2h_bias", "l0_h2h_bias", "r0_i2h_weight"]
    assert lstm.l1_i2h_weight.shape == (12, 6)
    gru = rnn.GRU(4, layout="NTC", input_size=2)
    gru.initialize()
    x = np.random.normal(0, 1, (3, 6, 2))  # N, T, C
    out, (h,) = gru(x, gru.begin_state(3)[0])  # one array is a state list of one
    assert out.shape == (3, 6, 4) and h.shape == (1, 3, 4)
    tnc = rnn.GRU(4, input_size=2)
    tnc.initialize()
    for name, p in gru.collect_params().items():
        tnc.collect_params()[name].set_data(p.data())
    onp.testing.assert_allclose(tnc(x.transpose((1, 0, 2))).asnumpy(),
                                out.asnumpy().transpose(1, 0, 2), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(f[:-7] for f in os.listdir(FIXTURES)
                                        if f.endswith(".params")))
def test_parameters_saved_by_mxnet_give_mxnets_numbers(name):
    def load(suffix):
        return onp.load(os.path.join(FIXTURES, f"{name}-{suffix}.npy"))

    mode, _, rest = name.partition("_")
    if rest.startswith("tanh") or rest.startswith("relu"):
        mode, rest = f"rnn_{rest[:4]}", rest[5:]
    x = load("input")
    states = [np.array(load(f"state{k}")) for k in range(2 if mode == "lstm" else 1)]
    if rest == "cell":
        block = {"lstm": rnn.LSTMCell, "gru": rnn.GRUCell, "rnn": rnn.RNNCell}[mode](4)
    else:
        bidirectional = "bidirectional" in rest
        block = make_layer(mode, 5 if bidirectional else 4,
                           num_layers=2 if bidirectional else 1, bidirectional=bidirectional,
                           layout="NTC" if rest == "ntc" else "TNC")
    block.load_parameters(os.path.join(FIXTURES, name + ".params"))
    if rest == "cell":
        out, final = block.unroll(5, np.array(x), states, layout="NTC", merge_outputs=True)
    else:
        out, final = block(np.array(x), states)
    for k, got in enumerate([out] + final):
        onp.testing.assert_allclose(got.asnumpy(), load(f"output{k}"), rtol=1e-5, atol=1e-5)


def test_cells_step_and_unroll_like_numpy():
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    randomize(cell, 5)
    assert sorted(cell.collect_params().keys()) == [
        "h2h_bias", "h2h_weight", "i2h_bias", "i2h_weight"]
    rng = onp.random.RandomState(6)
    xs = rng.normal(size=(2, 4, 2)).astype(onp.float32)  # N, T, C
    w = tuple(cell.collect_params()[k].data().asnumpy()
              for k in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"))
    h = c = onp.zeros((2, 3))
    want = []
    for t in range(4):
        h, c = np_step("lstm", w, xs[:, t], h, c)
        want.append(h)
    out, states = cell(np.array(xs[:, 0]), cell.begin_state(2))
    onp.testing.assert_allclose(out.asnumpy(), want[0], rtol=1e-5, atol=1e-6)
    assert len(states) == 2
    merged, final = cell.unroll(4, np.array(xs), layout="NTC")
    assert merged.shape == (2, 4, 3)
    onp.testing.assert_allclose(merged.asnumpy(), onp.stack(want, axis=1), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(final[1].asnumpy(), c, rtol=1e-5, atol=1e-6)
    steps, _ = cell.unroll(4, [np.array(xs[:, t]) for t in range(4)])
    assert isinstance(steps, list) and len(steps) == 4
    onp.testing.assert_allclose(steps[3].asnumpy(), want[3], rtol=1e-5, atol=1e-6)
    tnc, _ = cell.unroll(4, np.array(xs.transpose(1, 0, 2)), layout="TNC", merge_outputs=True)
    onp.testing.assert_allclose(tnc.asnumpy(), onp.stack(want), rtol=1e-5, atol=1e-6)


def test_sequential_cell_equals_a_two_layer_gru():
    layer = rnn.GRU(4, num_layers=2, input_size=3)
    layer.initialize()
    randomize(layer, 7)
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.GRUCell(4, input_size=3))
    stack.add(rnn.GRUCell(4, input_size=4))
    stack.initialize()
    assert len(stack) == 2 and isinstance(stack[1], rnn.GRUCell)
    for local in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
        for i in range(2):
            stack.collect_params()[f"{i}.{local}"].set_data(
                layer.collect_params()[f"l{i}_{local}"].data())
    x = np.random.normal(0, 1, (6, 2, 3))
    out, states = stack.unroll(6, x, layout="TNC", merge_outputs=True)
    want, (h,) = layer(x, layer.begin_state(2))
    onp.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states[1].asnumpy(), h.asnumpy()[1], rtol=1e-5, atol=1e-6)


class Tagger(gluon.HybridBlock):
    """An LSTM and a Dense on each step: a user block with a recurrent child."""

    def __init__(self):
        super().__init__()
        self.lstm = rnn.LSTM(8, layout="NTC", bidirectional=True)
        self.out = gluon.nn.Dense(1, flatten=False)

    def forward(self, x):
        return self.out(self.lstm(x))


def test_training_a_tiny_sequence_task_reduces_the_loss():
    # Each step's target is the running sum of the inputs so far (needs memory).
    rng = onp.random.RandomState(3)
    x = rng.uniform(-1, 1, size=(32, 6, 1)).astype(onp.float32)
    y = onp.cumsum(x, axis=1)
    net = Tagger()
    net.initialize(init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.03})
    loss_fn = gluon.loss.L2Loss()
    X, Y = np.array(x), np.array(y)
    losses = []
    for _ in range(60):
        with autograd.record():
            loss = loss_fn(net(X), Y).mean()
        loss.backward()
        trainer.step(1)
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0], losses[::10]


def test_hybridize_export_and_imports(tmp_path):
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3)
    layer.initialize(init.Xavier())
    x = np.random.normal(0, 1, (5, 2, 3))
    states = [s + 0.1 for s in layer.begin_state(2)]
    out, final = layer(x, states)
    layer.hybridize()
    hout, hfinal = layer(x, states)
    onp.testing.assert_allclose(hout.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(hfinal[1].asnumpy(), final[1].asnumpy(), rtol=1e-5, atol=1e-6)
    sym, params = layer.export(str(tmp_path / "lstm"))
    imported = gluon.SymbolBlock.imports(sym, ["data0", "data1", "data2"], params)
    ys = imported(x, *states)
    for got, want in zip(ys, [hout] + hfinal):
        onp.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_bad_inputs_raise_clear_errors():
    lstm = rnn.LSTM(4, input_size=3)
    lstm.initialize()
    with pytest.raises(ValueError, match=r"lstm\d+: input has shape \[2, 3\], expected "
                                         r"\[time, batch, features\]"):
        lstm(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"lstm\d+: input of shape \[5, 2, 6\] has 6 features, "
                                         r"expected 3"):
        lstm(np.ones((5, 2, 6)))
    with pytest.raises(ValueError, match=r"called with 1 states, expected 2"):
        lstm(np.ones((5, 2, 3)), [np.zeros((1, 2, 4))])
    with pytest.raises(ValueError, match="layout 'NCT' is not supported"):
        rnn.GRU(4, layout="NCT")
    with pytest.raises(ValueError, match="activation 'sigmoid' is not supported"):
        rnn.RNN(4, activation="sigmoid")
    with pytest.raises(ValueError, match="projection_size is only for an LSTM"):
        rnn._RNNLayer("gru", 4, 1, "TNC", 0, False, 0, None, None, "zeros", "zeros", "float32",
                      False, projection_size=2)
    cell = rnn.GRUCell(3)
    cell.initialize()
    with pytest.raises(ValueError, match=r"grucell\d+: input has shape \[2, 3, 1\], expected "
                                         r"\[batch, features\]"):
        cell(np.ones((2, 3, 1)), cell.begin_state(2))
    with pytest.raises(TypeError, match="expected a recurrent cell"):
        rnn.SequentialRNNCell().add(gluon.nn.Dense(3))
