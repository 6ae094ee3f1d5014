"""gluon.rnn's bases for cells written in Python (RecurrentCell, HybridRecurrentCell,
ModifierCell), unroll(valid_length=...), DropoutCell(axes=...), and gluon.contrib.rnn's LSTMPCell
and VariationalDropoutCell: against numbers and gradients MXNet 1.9.1 computed
(tests/fixtures/mxnet/rnn/extra, made by make_rnn_fixtures.py, whose user cells are the ones
below with only the import changed), hybridized against imperative, padded sequences against
each sequence unrolled alone, the dropout masks' sharing, and the errors."""
import os

import numpy as onp
import pytest

from janus import autograd, gluon, np
from janus.base import NotSupportedError
from janus.gluon import rnn
from janus.gluon.contrib import rnn as contrib_rnn

EXTRA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet", "rnn",
                     "extra")


def fixture(name):
    return onp.load(os.path.join(EXTRA, name + ".npz"))


def randomize(block, seed, scale=0.6):
    rng = onp.random.RandomState(seed)
    for p in block.collect_params().values():
        p.set_data(np.array(rng.uniform(-scale, scale, size=p.shape).astype(onp.float32)))


def close(got, want, rtol=1e-5, atol=1e-6):
    onp.testing.assert_allclose(got.asnumpy() if hasattr(got, "asnumpy") else got, want,
                                rtol=rtol, atol=atol)


# ---- cells written by a user: the make_rnn_fixtures.py source, only the import changed ----

class TwoStateCell(rnn.HybridRecurrentCell):
    def __init__(self, hidden, input_size, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden = hidden
        with self.name_scope():
            self.i2h_weight = self.params.get("i2h_weight", shape=(input_size, hidden))
            self.h2h_weight = self.params.get("h2h_weight", shape=(hidden, hidden))

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden), "__layout__": "NC"}]

    def hybrid_forward(self, F, x, states, i2h_weight, h2h_weight):
        h = F.tanh(F.dot(x, i2h_weight) + F.dot(states[0], h2h_weight))
        return h, [h, states[1] + h]


class HalfCell(rnn.ModifierCell):
    def hybrid_forward(self, F, x, states):
        out, states = self.base_cell(x, states)
        return out * 0.5, states


def user_cells():
    s = rnn.SequentialRNNCell()
    s.add(TwoStateCell(4, 3))
    s.add(HalfCell(rnn.LSTMCell(3, input_size=4)))
    return s


@pytest.mark.parametrize("name", ["user_cells", "user_cells_valid"])
def test_user_cells_give_mxnets_numbers_and_gradients(name):
    d = fixture(name)
    cell = user_cells()
    assert sorted(cell.collect_params().keys()) == sorted(
        k[len("grad_"):] for k in d.files if k.startswith("grad_") and k != "grad_x")
    cell.load_parameters(os.path.join(EXTRA, name + ".params"))
    states = [np.array(d[f"state{k}"]) for k in range(4)]
    valid = np.array(d["valid_length"]) if "valid_length" in d.files else None
    x = np.array(d["x"])
    x.attach_grad()
    with autograd.record():
        out, final = cell.unroll(5, x, states, layout="NTC", merge_outputs=True,
                                 valid_length=valid)
        w = np.array(onp.linspace(-1, 1, out.size).reshape(out.shape).astype(onp.float32))
        (out * w).sum().backward()
    close(out, d["out"])
    assert len(final) == 4
    for k, f in enumerate(final):
        close(f, d[f"final{k}"])
    close(x.grad, d["grad_x"], rtol=1e-4, atol=1e-5)
    for pname, p in cell.collect_params().items():
        close(p.grad(), d["grad_" + pname], rtol=1e-4, atol=1e-5)


def test_a_user_cell_steps_unrolls_and_hybridizes():
    cell = TwoStateCell(4, 3)
    cell.initialize()
    randomize(cell, 1)
    assert cell.state_info(2)[0]["shape"] == (2, 4)
    assert [s.shape for s in cell.begin_state(2)] == [(2, 4), (2, 4)]
    assert [s.shape for s in cell.begin_state(2, func=np.ones)] == [(2, 4), (2, 4)]
    x = np.random.normal(0, 1, (2, 5, 3))
    y, states = cell(x[:, 0], cell.begin_state(2))
    assert y.shape == (2, 4) and len(states) == 2
    want, want_states = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    steps, _ = cell.unroll(5, x, layout="NTC", merge_outputs=False)
    close(steps[0], y.asnumpy())
    cell.hybridize()
    got, got_states = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    close(got, want.asnumpy(), rtol=1e-6, atol=1e-7)
    for g, w in zip(got_states, want_states):
        close(g, w.asnumpy(), rtol=1e-6, atol=1e-7)


def test_user_cells_in_the_built_in_wrappers_hybridize_as_imperative():
    def make():
        s = rnn.HybridSequentialRNNCell()
        s.add(rnn.BidirectionalCell(TwoStateCell(3, 3), HalfCell(rnn.GRUCell(2, input_size=3))))
        s.add(rnn.ResidualCell(TwoStateCell(5, 5)))
        return s

    cell = make()
    cell.initialize()
    randomize(cell, 2)
    x = np.random.normal(0, 1, (4, 2, 3))
    valid = np.array([4, 2])
    want, want_states = cell.unroll(4, x, layout="TNC", merge_outputs=True, valid_length=valid)
    cell.hybridize()
    got, got_states = cell.unroll(4, x, layout="TNC", merge_outputs=True, valid_length=valid)
    close(got, want.asnumpy(), rtol=1e-6, atol=1e-7)
    for g, w in zip(got_states, want_states):
        close(g, w.asnumpy(), rtol=1e-6, atol=1e-7)


def test_a_recurrent_cell_with_forward_and_its_own_begin_state():
    class Accumulate(rnn.RecurrentCell):
        """Not hybrid: forward(inputs, states); begin_state starts from ones."""

        def state_info(self, batch_size=0):
            return [{"shape": (batch_size, 2)}]

        def begin_state(self, batch_size=0, **kwargs):
            return [np.ones((batch_size, 2))]

        def forward(self, inputs, states):
            s = states[0] + inputs
            return s * 1, [s]

    cell = Accumulate()
    out, states = cell.unroll(3, np.ones((3, 1, 2)), layout="TNC")
    assert out.asnumpy()[:, 0, 0].tolist() == [2.0, 3.0, 4.0]
    assert states[0].asnumpy().tolist() == [[4.0, 4.0]]


# ---- valid_length ----

def sequential_cells():
    s = rnn.HybridSequentialRNNCell()
    s.add(rnn.LSTMCell(4, input_size=3))
    s.add(rnn.DropoutCell(0.5))
    s.add(rnn.ResidualCell(rnn.GRUCell(4, input_size=4)))
    s.add(rnn.ZoneoutCell(rnn.RNNCell(3, input_size=4), 0.3, 0.3))
    return s


VALID_CELLS = {
    "bidirectional_cell": (lambda: rnn.BidirectionalCell(rnn.LSTMCell(4, input_size=3),
                                                         rnn.GRUCell(3, input_size=3)), "NTC"),
    "residual_cell": (lambda: rnn.ResidualCell(rnn.GRUCell(3, input_size=3)), "TNC"),
    "zoneout_cell": (lambda: rnn.ZoneoutCell(rnn.LSTMCell(4, input_size=3), 0.5, 0.5), "NTC"),
    "sequential_cells": (sequential_cells, "TNC"),
}


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", sorted(VALID_CELLS))
def test_valid_length_gives_mxnets_numbers(name, hybridize):
    make, layout = VALID_CELLS[name]
    d = fixture(name + "_valid")
    cell = make()
    cell.load_parameters(os.path.join(EXTRA, name + "_valid.params"))
    if hybridize:
        cell.hybridize()
    states = [np.array(d[f"state{k}"]) for k in range(len(cell.begin_state(3)))]
    out, final = cell.unroll(5, np.array(d["x"]), states, layout=layout, merge_outputs=True,
                             valid_length=np.array(d["valid_length"]))
    close(out, d["out"])
    for k, f in enumerate(final):
        close(f, d[f"final{k}"])
    # Unmerged steps, and valid_length in another dtype.
    steps, _ = cell.unroll(5, np.array(d["x"]), states, layout=layout, merge_outputs=False,
                           valid_length=np.array(d["valid_length"]).astype("int32"))
    t_axis = 1 if layout == "NTC" else 0
    close(steps[3], d["out"].take(3, axis=t_axis))


def test_a_dropout_cell_ignores_valid_length_as_mxnet_does():
    d = fixture("dropout_cell_valid")
    out, states = rnn.DropoutCell(0.5).unroll(5, np.array(d["x"]), layout="NTC",
                                              merge_outputs=True,
                                              valid_length=np.array([5, 2, 4]))
    close(out, d["out"])
    assert states == []


def bidirectional_stack():
    s = rnn.SequentialRNNCell()
    s.add(rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=3), TwoStateCell(2, 3)))
    s.add(rnn.LSTMCell(4, input_size=5))
    return s


@pytest.mark.parametrize("make", [bidirectional_stack, lambda: TwoStateCell(3, 3),
                                  VALID_CELLS["bidirectional_cell"][0]])
def test_padded_sequences_give_each_sequence_unrolled_alone(make):
    """What MXNet cannot check for a BidirectionalCell inside a SequentialRNNCell (1.9.1 fails
    there): with valid_length, sequence n's outputs and final states are those of its first
    valid_length[n] steps unrolled alone, and its padded outputs are zeros."""
    cell = make()
    cell.initialize()
    randomize(cell, 3)
    x = np.random.normal(0, 1, (3, 5, 3))
    lengths = [5, 2, 1]
    states = [np.array(onp.random.uniform(-0.5, 0.5, s.shape).astype(onp.float32))
              for s in cell.begin_state(3)]
    x.attach_grad()
    with autograd.record():
        out, final = cell.unroll(5, x, states, layout="NTC", merge_outputs=True,
                                 valid_length=np.array(lengths))
    out.backward()
    for n, t in enumerate(lengths):
        alone, alone_final = cell.unroll(t, x[n:n + 1, :t], [s[n:n + 1] for s in states],
                                         layout="NTC", merge_outputs=True)
        close(out[n:n + 1, :t], alone.asnumpy())
        assert not out.asnumpy()[n, t:].any()
        for f, a in zip(final, alone_final):
            close(f[n:n + 1], a.asnumpy())
        # Padded steps reach nothing: their inputs get no gradient.
        assert not x.grad.asnumpy()[n, t:].any()
        assert x.grad.asnumpy()[n, :t].any()


def test_a_zero_valid_length_gives_zeros_and_the_begin_states():
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    states = [np.ones((2, 3))]
    out, final = cell.unroll(3, np.ones((2, 3, 2)), states, valid_length=np.array([0, 3]))
    assert not out.asnumpy()[0].any() and out.asnumpy()[1].all()
    assert final[0].asnumpy()[0].tolist() == [1.0, 1.0, 1.0]


# ---- DropoutCell(axes) ----

def test_dropout_cell_shares_its_mask_along_axes():
    x = np.ones((6, 40))
    with autograd.train_mode():
        # A step (N, C): axes=(0,) shares each feature's draw across the batch.
        y, _ = rnn.DropoutCell(0.5, axes=(0,))(x, [])
        col = y.asnumpy()
        assert (col == col[0]).all() and set(onp.unique(col)) == {0.0, 2.0}
        # Unrolled and merged, (N, T, C): axes=(1,) shares the mask along time.
        seq = np.ones((4, 5, 30))
        out, _ = rnn.DropoutCell(0.5, axes=(1,)).unroll(5, seq, layout="NTC",
                                                        merge_outputs=True)
        o = out.asnumpy()
        assert (o == o[:, :1]).all() and set(onp.unique(o)) == {0.0, 2.0}
        # Unmerged, each step (N, C) has its own mask shared across the batch.
        steps, _ = rnn.DropoutCell(0.5, axes=(0,)).unroll(5, seq, layout="NTC",
                                                          merge_outputs=False)
        s = [st.asnumpy() for st in steps]
        assert all((a == a[0]).all() for a in s)
        assert any((a != s[0]).any() for a in s[1:])
    out, _ = rnn.DropoutCell(0.5, axes=(1,)).unroll(5, seq, merge_outputs=True)
    assert (out.asnumpy() == 1).all()  # outside training: the identity
    assert repr(rnn.DropoutCell(0.25, axes=(0,))) == "DropoutCell(rate=0.25, axes=(0,))"


def test_dropout_cell_axes_gradient_is_its_mask():
    x = np.ones((3, 20))
    x.attach_grad()
    with autograd.record(train_mode=True):
        y, _ = rnn.DropoutCell(0.5, axes=(0,))(x, [])
    y.backward()
    close(x.grad, y.asnumpy())


# ---- contrib.rnn: LSTMPCell, VariationalDropoutCell ----

def test_contrib_rnn_has_mxnets_classes():
    assert contrib_rnn.LSTMPCell is rnn.LSTMPCell
    assert contrib_rnn.VariationalDropoutCell is rnn.VariationalDropoutCell
    assert gluon.contrib.rnn is contrib_rnn
    with pytest.raises(NotSupportedError, match="Conv2DLSTMCell: Janus does not have"):
        contrib_rnn.Conv2DLSTMCell


@pytest.mark.parametrize("hybridize", [False, True])
def test_lstmp_cell_gives_mxnets_numbers_and_gradients(hybridize):
    d = fixture("lstmp_cell")
    cell = contrib_rnn.LSTMPCell(5, 3)
    assert [s.shape for s in cell.begin_state(2)] == [(2, 3), (2, 5)]
    assert cell.h2h_weight.shape == (20, 3) and cell.h2r_weight.shape == (3, 5)
    cell.load_parameters(os.path.join(EXTRA, "lstmp_cell.params"))
    if hybridize:
        cell.hybridize()
    x = np.array(d["x"])
    x.attach_grad()
    with autograd.record():
        out, final = cell.unroll(4, x, [np.array(d["state0"]), np.array(d["state1"])],
                                 layout="TNC", merge_outputs=True)
        w = np.array(onp.linspace(-1, 1, out.size).reshape(out.shape).astype(onp.float32))
        (out * w).sum().backward()
    close(out, d["out"])
    close(final[0], d["final0"])
    close(final[1], d["final1"])
    close(x.grad, d["grad_x"], rtol=1e-4, atol=1e-5)
    for pname, p in cell.collect_params().items():
        close(p.grad(), d["grad_" + pname], rtol=1e-4, atol=1e-5)
    assert repr(cell).strip() == "LSTMPCell(3 -> 20 -> 3)"


def test_variational_dropout_cell_outside_training_gives_mxnets_numbers():
    d = fixture("variational_dropout_cell")
    cell = contrib_rnn.VariationalDropoutCell(rnn.GRUCell(4, input_size=3), drop_inputs=0.3,
                                              drop_states=0.3, drop_outputs=0.3)
    cell.load_parameters(os.path.join(EXTRA, "variational_dropout_cell.params"))
    assert sorted(cell.collect_params().keys()) == [
        "base_cell.h2h_bias", "base_cell.h2h_weight", "base_cell.i2h_bias",
        "base_cell.i2h_weight"]
    out, final = cell.unroll(5, np.array(d["x"]), layout="NTC", merge_outputs=True)
    close(out, d["out"])
    close(final[0], d["final0"])
    cell.hybridize()  # outside training a hybridized one runs too
    out, _ = cell.unroll(5, np.array(d["x"]), layout="NTC", merge_outputs=True)
    close(out, d["out"])


class PassCell(rnn.HybridRecurrentCell):
    """output = input + state; the state passes on unchanged."""

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, 30)}]

    def hybrid_forward(self, F, x, states):
        return x + states[0], [states[0]]


def test_variational_dropout_keeps_each_mask_for_every_step_until_reset():
    x = np.ones((4, 6, 30))
    zeros = [np.zeros((4, 30))]
    with autograd.train_mode():
        for kwargs in ({"drop_inputs": 0.5}, {"drop_outputs": 0.5}):
            cell = contrib_rnn.VariationalDropoutCell(PassCell(), **kwargs)
            out, _ = cell.unroll(6, x, zeros, layout="NTC", merge_outputs=True)
            o = out.asnumpy()
            assert (o == o[:, :1]).all() and set(onp.unique(o)) == {0.0, 2.0}
            again, _ = cell.unroll(6, x, zeros, layout="NTC", merge_outputs=True)
            assert (again.asnumpy() != o).any()  # unroll reset(): new masks
        # drop_states masks the first state before each step (PassCell passes the masked
        # state on, so step t gives mask ** (t + 1)).
        cell = contrib_rnn.VariationalDropoutCell(PassCell(), drop_states=0.5)
        out, _ = cell.unroll(6, np.zeros((4, 6, 30)), [np.ones((4, 30))], layout="NTC",
                             merge_outputs=True)
        o = out.asnumpy()
        assert set(onp.unique(o[:, 0])) == {0.0, 2.0}
        for t in range(6):
            assert (o[:, t] == o[:, 0] ** (t + 1)).all()
        # Stepped by hand, the masks stay until reset().
        cell = contrib_rnn.VariationalDropoutCell(PassCell(), drop_inputs=0.5)
        a, _ = cell(np.ones((4, 30)), zeros)
        b, _ = cell(np.ones((4, 30)), zeros)
        assert (a.asnumpy() == b.asnumpy()).all()
        cell.reset()
        c, _ = cell(np.ones((4, 30)), zeros)
        assert (c.asnumpy() != a.asnumpy()).any()


def test_a_hybridized_variational_dropout_cell_refuses_training():
    cell = contrib_rnn.VariationalDropoutCell(rnn.GRUCell(3, input_size=2), drop_inputs=0.5)
    cell.initialize()
    cell.hybridize()
    with autograd.train_mode():
        with pytest.raises(NotImplementedError, match="cannot run in training"):
            cell.unroll(3, np.ones((2, 3, 2)))


# ---- errors ----

def test_bad_input_raises_clear_errors():
    cell = TwoStateCell(4, 3)
    cell.initialize()
    with pytest.raises(ValueError, match=r"called with 1 states, expected 2 \(state_info"):
        cell(np.ones((2, 3)), [np.zeros((2, 4))])
    with pytest.raises(ValueError, match=r"valid_length has shape \[3\], expected \[2\]"):
        cell.unroll(3, np.ones((2, 3, 3)), valid_length=np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="valid_length must be an ndarray"):
        cell.unroll(3, np.ones((2, 3, 3)), valid_length=[1, 2])
    with pytest.raises(ValueError, match="layout 'NCT' is not supported, expected 'TNC' or "
                                         "'NTC'"):
        cell.unroll(3, np.ones((2, 3, 3)), cell.begin_state(2), layout="NCT")
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, input_size=2), rnn.GRUCell(3, input_size=2))
    bi.initialize()
    with pytest.raises(ValueError, match=r"valid_length has shape \[2, 1\], expected \[2\]"):
        bi.unroll(3, np.ones((2, 3, 2)), valid_length=np.ones((2, 1)))

    class NoStateInfo(rnn.HybridRecurrentCell):
        def hybrid_forward(self, F, x, states):
            return x, states

    with pytest.raises(NotImplementedError, match="must define state_info"):
        NoStateInfo().unroll(2, np.ones((1, 2, 3)))

    class NoForward(rnn.RecurrentCell):
        def state_info(self, batch_size=0):
            return []

    with pytest.raises(NotImplementedError, match="defines neither forward"):
        NoForward()(np.ones((1, 3)), [])

    class BadReturn(rnn.RecurrentCell):
        def state_info(self, batch_size=0):
            return [{"shape": (batch_size, 3)}]

        def forward(self, x, states):
            return x

    with pytest.raises(TypeError, match=r"expected \(output, \[states\]\)"):
        BadReturn()(np.ones((1, 3)), [np.ones((1, 3))])

    class BadStateInfo(rnn.RecurrentCell):
        def state_info(self, batch_size=0):
            return [(batch_size, 3)]

    with pytest.raises(TypeError, match="expected a dict with a 'shape'"):
        BadStateInfo().begin_state(2)

    with pytest.raises(TypeError, match="base_cell must be a recurrent cell"):
        HalfCell(gluon.nn.Dense(3))
    with pytest.raises(ValueError, match=r"drop_states is 1\.5, expected a number in \[0, 1\)"):
        contrib_rnn.VariationalDropoutCell(rnn.GRUCell(3), drop_states=1.5)
    with pytest.raises(ValueError, match="takes no state dropout"):
        contrib_rnn.VariationalDropoutCell(bi, drop_states=0.5)
    with pytest.raises(ValueError, match="projection_size is 0, expected a positive number"):
        contrib_rnn.LSTMPCell(4, 0)
    with pytest.raises(TypeError, match="axes must be a tuple of ints"):
        rnn.DropoutCell(0.5, axes=("time",))
    with autograd.train_mode():
        with pytest.raises(ValueError, match=r"dropout axis 2 is out of range for an input of "
                                             r"shape \[2, 3\]"):
            rnn.DropoutCell(0.5, axes=(2,))(np.ones((2, 3)), [])
