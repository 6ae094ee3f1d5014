"""janus.ndarray (mx.nd) and hybrid_forward's F: MXNet 1.x's legacy operators against the
outputs and gradients MXNet 1.9.1 computed for the same calls (tests/fixtures/mxnet/
legacy_nd.npz, made by make_legacy_nd_fixtures.py), a 1.x user block and a 1.x user LSTM cell
(the fixture script's, only the import changed, and without `with self.name_scope():` in the
block, which Janus's HybridBlock lacks) imperative and hybridized, and the errors."""
import json
import os

import numpy as onp
import pytest

import janus as mx
from janus import autograd, gluon, nd
from janus.base import NotSupportedError
from janus.gluon import rnn

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet",
                       "legacy_nd.npz")
D = onp.load(FIXTURE)
CASES = sorted({k.split("/")[0] for k in D.files if k.endswith("/op")})


def close(got, want, rtol=1e-5, atol=1e-5):
    onp.testing.assert_allclose(got.asnumpy() if hasattr(got, "asnumpy") else got, want,
                                rtol=rtol, atol=atol)


def test_fixture_has_every_case():
    assert len(CASES) == 83


@pytest.mark.parametrize("case", CASES)
def test_operator_gives_mxnets_outputs_and_gradients(case):
    op = str(D[f"{case}/op"])
    kwargs = {k: tuple(v) if isinstance(v, list) else v
              for k, v in json.loads(str(D[f"{case}/kwargs"])).items()}
    inputs = [nd.array(D[f"{case}/in{k}"]) for k in range(10) if f"{case}/in{k}" in D.files]
    grads = [f"{case}/grad{k}" for k in range(len(inputs))]
    differentiable = grads[0] in D.files
    if differentiable:
        for a in inputs:
            a.attach_grad()
    fn = getattr(nd, op)
    with autograd.record(train_mode=bool(D[f"{case}/train"])):
        ys = fn(*inputs, **kwargs)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        loss = (ys[0] * nd.array(D[f"{case}/head"])).sum()
    n_out = sum(1 for k in D.files if k.startswith(f"{case}/out"))
    assert len(ys) == n_out
    for k, y in enumerate(ys):
        assert y.shape == D[f"{case}/out{k}"].shape
        close(y, D[f"{case}/out{k}"], rtol=1e-4, atol=1e-5)
    if differentiable:
        loss.backward()
        for a, g in zip(inputs, grads):
            close(a.grad, D[g], rtol=1e-4, atol=1e-5)


def test_batch_norm_in_training_updates_the_moving_statistics():
    x, gamma, beta, mean, var = [nd.array(D[f"batchnorm_train/in{k}"]) for k in range(5)]
    with autograd.record():
        nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False, momentum=0.9)
    xs = D["batchnorm_train/in0"]
    batch_mean = xs.mean(axis=(0, 2))
    close(mean, 0.9 * D["batchnorm_train/in3"] + 0.1 * batch_mean)
    close(var, 0.9 * D["batchnorm_train/in4"] + 0.1 * xs.var(axis=(0, 2)))


# ---- the fixture script's 1.x user block and cell, only the import changed -----------------

class Dense1x(gluon.HybridBlock):
    """A 1.x user block: F.FullyConnected then F.Activation."""

    def __init__(self, units, in_units):
        super().__init__()
        self._units = units
        self.weight = self.params.get("weight", shape=(units, in_units))
        self.bias = self.params.get("bias", shape=(units,))

    def hybrid_forward(self, F, x, weight, bias):
        return F.Activation(F.FullyConnected(x, weight, bias, num_hidden=self._units),
                            act_type="relu")


class LSTM1x(rnn.HybridRecurrentCell):
    """A 1.x user cell computed as MXNet's own LSTMCell does."""

    def __init__(self, hidden, input_size):
        super().__init__()
        self._hidden = hidden
        with self.name_scope():
            self.i2h_weight = self.params.get("i2h_weight", shape=(4 * hidden, input_size))
            self.h2h_weight = self.params.get("h2h_weight", shape=(4 * hidden, hidden))
            self.i2h_bias = self.params.get("i2h_bias", shape=(4 * hidden,))
            self.h2h_bias = self.params.get("h2h_bias", shape=(4 * hidden,))

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden), "__layout__": "NC"}] * 2

    def hybrid_forward(self, F, x, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h = F.FullyConnected(x, i2h_weight, i2h_bias, num_hidden=4 * self._hidden)
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=4 * self._hidden)
        gates = F.elemwise_add(i2h, h2h)
        i, f, g, o = F.SliceChannel(gates, num_outputs=4)
        i = F.Activation(i, act_type="sigmoid")
        f = F.Activation(f, act_type="sigmoid")
        g = F.Activation(g, act_type="tanh")
        o = F.Activation(o, act_type="sigmoid")
        c = F.elemwise_add(F.elemwise_mul(f, states[1]), F.elemwise_mul(i, g))
        h = F.elemwise_mul(o, F.Activation(c, act_type="tanh"))
        return h, [h, c]


def set_params(block, prefix):
    stored = {k[len(prefix) + len("/param/"):]: D[k] for k in D.files
              if k.startswith(prefix + "/param/")}
    params = block.collect_params()
    assert len(params) == len(stored)
    for name, p in params.items():
        key = next(k for k in stored if name.endswith(k))
        p.set_data(nd.array(stored[key]))


@pytest.mark.parametrize("hybridize", [False, True])
def test_user_block_with_legacy_F_gives_mxnets_numbers(hybridize):
    block = Dense1x(5, 4)
    block.initialize()
    set_params(block, "block_dense")
    if hybridize:
        block.hybridize()
    x = nd.array(D["block_dense/x"])
    x.attach_grad()
    with autograd.record():
        y = block(x)
    y.backward()
    close(y, D["block_dense/y"])
    close(x.grad, D["block_dense/dx"])


@pytest.mark.parametrize("hybridize", [False, True])
def test_user_lstm_cell_with_legacy_F_gives_mxnets_numbers(hybridize):
    cell = LSTM1x(3, 4)
    cell.initialize()
    set_params(cell, "cell_lstm")
    if hybridize:
        cell.hybridize()
    x = nd.array(D["cell_lstm/x"])
    x.attach_grad()
    with autograd.record():
        outputs, states = cell.unroll(5, x, layout="TNC", merge_outputs=True)
        loss = outputs.sum() + states[1].sum()
    loss.backward()
    close(outputs, D["cell_lstm/y"])
    close(states[1], D["cell_lstm/c"])
    close(x.grad, D["cell_lstm/dx"])


def test_F_follows_the_legacy_semantics_where_numpy_differs():
    seen = {}

    class Probe(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            seen["split"] = [p.shape for p in F.split(x, num_outputs=3)]
            seen["sum"] = F.sum(x, axis=1, exclude=True).shape
            seen["reshape"] = F.reshape(x, shape=(0, -3)).shape
            seen["concat"] = F.concat(x, x).shape
            seen["transpose"] = F.transpose(x).shape
            seen["np"] = F.np.concatenate([x, x]).shape
            return F.npx.relu(x)

    Probe()(nd.ones((2, 3, 4)))
    assert seen == {"split": [(2, 1, 4)] * 3, "sum": (3,), "reshape": (2, 12),
                    "concat": (2, 6, 4), "transpose": (4, 3, 2), "np": (4, 3, 4)}


def test_constructors_still_work():
    assert mx.nd is nd and nd.NDArray is mx.np.ndarray
    close(nd.array([[1, 2]]), onp.array([[1, 2]], "float32"))
    assert nd.zeros((2, 3)).shape == (2, 3) and float(nd.ones((2,)).sum()) == 2.0
    close(nd.arange(3), onp.arange(3, dtype="float32"))
    close(nd._internal._plus_scalar(nd.ones((2,)), scalar=1.5), onp.full((2,), 2.5))


# ---- errors --------------------------------------------------------------------------------

def test_unknown_act_type_is_a_value_error_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"Activation: act_type 'swish' is not known.*'relu'"):
        nd.Activation(nd.ones((2,)), act_type="swish")
    with pytest.raises(ValueError, match=r"LeakyReLU: act_type 'nope'"):
        nd.LeakyReLU(nd.ones((2,)), act_type="nope")


def test_bad_num_hidden_is_a_value_error():
    x, w, b = nd.ones((2, 4)), nd.ones((3, 4)), nd.ones((3,))
    with pytest.raises(ValueError, match=r"num_hidden = 5 but the weight has shape \(3, 4\)"):
        nd.FullyConnected(x, w, b, num_hidden=5)
    with pytest.raises(ValueError, match=r"num_hidden must be a positive integer, got None"):
        nd.FullyConnected(x, w, b)
    with pytest.raises(ValueError, match=r"no bias given"):
        nd.FullyConnected(x, w, num_hidden=3)


def test_unknown_operator_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match=r"Janus has no such legacy MXNet operator "
                                             r"\(mx.nd.Correlation\)"):
        nd.Correlation
    seen = {}

    class UsesUnknown(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            try:
                F.ROIPooling(x)
            except AttributeError as e:
                seen["error"] = str(e)
            return x

    UsesUnknown()(nd.ones((1,)))
    assert "ROIPooling" in seen["error"] and "no such legacy MXNet operator" in seen["error"]


def test_shape_errors_name_the_operator():
    with pytest.raises(ValueError, match=r"SliceChannel: axis 1 of \(2, 5\) has extent 5, which "
                                         r"num_outputs = 2 does not divide"):
        nd.split(nd.ones((2, 5)), num_outputs=2)
    with pytest.raises(ValueError, match=r"elemwise_add: the shapes \(2, 3\) and \(1, 3\) differ"):
        nd.elemwise_add(nd.ones((2, 3)), nd.ones((1, 3)))
    with pytest.raises(ValueError, match=r"mxnet_reshape: codes \(-1, -1\) do not fit input "
                                         r"shape \[2, 3\]: more than one -1"):
        nd.reshape(nd.ones((2, 3)), shape=(-1, -1))
    with pytest.raises(NotSupportedError, match=r"Pooling: pool_type 'lp'"):
        nd.Pooling(nd.ones((1, 1, 2, 2)), kernel=(2, 2), pool_type="lp")


def test_invoke_names_unknown_operators_and_attributes():
    from janus import _janus
    x = nd.ones((2, 3))
    close(_janus.invoke("sum", [x], {"axes": (1,)})[0], onp.full((2,), 3.0))
    with pytest.raises(ValueError, match=r"no_such_op"):
        _janus.invoke("no_such_op", [x], {})
    with pytest.raises(ValueError, match=r"sum: no attribute named 'axis', expected one of "
                                         r"\[axes, keepdims\]"):
        _janus.invoke("sum", [x], {"axis": 1})
    with pytest.raises(ValueError, match=r"sum: attribute 'axes' must be a sequence of integers"):
        _janus.invoke("sum", [x], {"axes": (1.5,)})


class ConvNet1x(gluon.HybridBlock):
    """Convolution, BatchNorm, Pooling, Reshape, SliceChannel, Concat, sum through F."""

    def __init__(self):
        super().__init__()
        self.weight = self.params.get("weight", shape=(4, 2, 3, 3))
        self.gamma = self.params.get("gamma", shape=(4,))
        self.beta = self.params.get("beta", shape=(4,))
        self.mean = self.params.get("mean", shape=(4,), grad_req="null")
        self.var = self.params.get("var", shape=(4,), grad_req="null", init="ones")

    def hybrid_forward(self, F, x, weight, gamma, beta, mean, var):
        y = F.Convolution(x, weight, kernel=(3, 3), num_filter=4, pad=(1, 1), no_bias=True)
        y = F.BatchNorm(y, gamma, beta, mean, var, fix_gamma=False)
        y = F.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type="max")
        a, b = F.SliceChannel(y, num_outputs=2)
        y = F.Concat(F.Activation(a, act_type="relu"), F.LeakyReLU(b, slope=0.1), dim=1)
        return F.sum(F.Reshape(y, shape=(0, -1)), axis=1, keepdims=True)


def test_legacy_layers_hybridized_equal_imperative():
    net = ConvNet1x()
    net.initialize(mx.init.Uniform(0.5))
    x = nd.array(onp.random.RandomState(3).uniform(-1, 1, (2, 2, 6, 6)).astype("float32"))
    want = net(x)
    net.hybridize()
    close(net(x), want.asnumpy())
    close(net(x), want.asnumpy())


def test_legacy_layers_train_hybridized_as_imperative():
    x = nd.array(onp.random.RandomState(3).uniform(-1, 1, (2, 2, 6, 6)).astype("float32"))
    got = []
    for hybridize in (False, True):
        net = ConvNet1x()
        net.initialize()
        for k, p in enumerate(net.collect_params().values()):
            rng = onp.random.RandomState(k)
            p.set_data(nd.array(rng.uniform(0.1, 1, p.shape).astype("float32")))
        before = net.mean.data().asnumpy()
        if hybridize:
            net.hybridize()
        with autograd.record():
            y = net(x)
        y.backward()
        assert not onp.allclose(net.mean.data().asnumpy(), before)  # the batch's statistics
        got.append([y, net.mean.data(), net.var.data(), net.weight.grad(), net.gamma.grad()])
    for a, b in zip(*got):
        close(b, a.asnumpy())
