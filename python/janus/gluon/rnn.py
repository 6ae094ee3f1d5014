"""``gluon.rnn``: recurrent layers and cells, MXNet 1.9's names and call forms over the C++ ones
(janus/nn/rnn.h, composed of registered operators, so that autograd, hybridize and export work
as for any layer). Cells that wrap cells (BidirectionalCell, ResidualCell, ZoneoutCell) name
their children's parameters as MXNet does: ``l_cell.i2h_weight``, ``base_cell.h2h_bias``.

Layers run whole sequences: ``out = layer(x)`` or ``out, states = layer(x, states)``, with x
``(T, N, C)`` ('TNC') or ``(N, T, C)`` ('NTC') and each state ``(num_layers * D, N, H)``.
Cells run one step: ``out, states = cell(x, states)``; ``unroll`` runs several. Parameter names
(``l0_i2h_weight``, ``r0_h2h_bias``, a cell's ``i2h_weight``) and gate order (LSTM: i, f, c, o;
GRU: r, z, n) are MXNet's, so parameters saved by MXNet load and give its numbers."""
from .. import _janus
from ..base import NotSupportedError

_NDArray = _janus.ndarray

_NOT_YET = ("VariationalDropoutCell", "LSTMPCell", "HybridRecurrentCell", "RecurrentCell",
            "ModifierCell")


def __getattr__(name):
    if name in _NOT_YET:
        raise NotSupportedError(f"gluon.rnn.{name}: Janus does not have this cell yet (it has "
                                "RNNCell, LSTMCell, GRUCell, SequentialRNNCell, "
                                "BidirectionalCell, DropoutCell, ResidualCell and ZoneoutCell)")
    raise AttributeError(f"module 'janus.gluon.rnn' has no attribute '{name}'")


def _check_dtype(cls, dtype):
    if str(dtype) not in ("float32", "<class 'numpy.float32'>"):
        raise NotSupportedError(f"{cls}: dtype {dtype} is not supported, only float32")


def _as_list(states, cls):
    if isinstance(states, _NDArray):
        return [states]
    if isinstance(states, (list, tuple)):
        return list(states)
    raise TypeError(f"{cls}: states must be an ndarray or a list of them, got "
                    f"{type(states).__name__}")


def _own_param(block, name):
    """``layer.l0_i2h_weight`` / ``cell.i2h_weight``, as MXNet's blocks have them."""
    if not name.startswith("_"):
        params = block.collect_params()
        if name in params:
            return params[name]
    raise AttributeError(f"'{type(block).__name__}' object has no attribute '{name}'")


class _RNNLayer(_janus.RecurrentLayer):
    _mode = None

    def __init__(self, mode, hidden_size, num_layers, layout, dropout, bidirectional,
                 input_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dtype, use_sequence_length,
                 **lstm_options):
        _check_dtype(type(self).__name__, dtype)
        super().__init__(mode, hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer,
                         use_sequence_length=bool(use_sequence_length), **lstm_options)
        self._use_sequence_length = bool(use_sequence_length)

    def begin_state(self, batch_size=0, func=None, ctx=None, **kwargs):
        """Zero states for ``batch_size`` sequences: a list of ``(num_layers * D, N, H)``
        arrays (two for LSTM: h and c)."""
        if func is not None:
            states = super().begin_state(batch_size, ctx)
            return [func(shape=s.shape, ctx=ctx, **kwargs) if ctx is not None
                    else func(shape=s.shape, **kwargs) for s in states]
        return super().begin_state(batch_size, ctx)

    def __call__(self, inputs, states=None, sequence_length=None):
        """``out = layer(x)`` or ``out, states = layer(x, states)``; with
        ``use_sequence_length=True`` also ``sequence_length`` ``(N,)``: steps past each
        sequence's length give zero outputs and leave the states as they were."""
        cls = type(self).__name__
        if self._use_sequence_length and sequence_length is None:
            raise ValueError(f"{cls}: use_sequence_length=True, expected a sequence_length "
                             "argument")
        if not self._use_sequence_length and sequence_length is not None:
            raise ValueError(f"{cls}: sequence_length given but use_sequence_length=False")
        extra = [] if sequence_length is None else [sequence_length]
        if states is None:
            return _janus.Block.__call__(self, inputs, *extra)
        ys = _janus.Block.__call__(self, inputs, *_as_list(states, cls), *extra)
        return ys[0], list(ys[1:])

    forward = __call__
    __getattr__ = _own_param


class RNN(_RNNLayer):
    """Elman RNN: h' = activation(W_i x + b_i + W_h h + b_h), activation 'relu' or 'tanh'."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", use_sequence_length=False, **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"RNN: activation '{activation}' is not supported, expected 'relu' "
                             "or 'tanh'")
        super().__init__("rnn_" + activation, hidden_size, num_layers, layout, dropout,
                         bidirectional, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                         dtype, use_sequence_length)


class LSTM(_RNNLayer):
    """Long short-term memory; gates i, f, c, o (MXNet's order); states [h, c].

    ``projection_size`` P makes it an LSTMP: each step's h is projected by ``h2r_weight``
    ``(P, hidden_size)`` to r, the output and recurrent state (h states ``(L * D, N, P)``).
    ``state_clip_min``/``state_clip_max`` clip the cell state after each step (a NaN there
    becomes ``state_clip_min`` with ``state_clip_nan``), as MXNet's GPU (cuDNN) LSTM does;
    MXNet 1.9's CPU LSTM ignores these three."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32",
                 use_sequence_length=False, **kwargs):
        super().__init__("lstm", hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, dtype, use_sequence_length,
                         projection_size=projection_size or 0,
                         h2r_weight_initializer=h2r_weight_initializer,
                         state_clip_min=state_clip_min, state_clip_max=state_clip_max,
                         state_clip_nan=bool(state_clip_nan))


class GRU(_RNNLayer):
    """Gated recurrent unit; gates r, z, n (MXNet's order, the reset gate applied to
    W_hn h + b_hn)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 use_sequence_length=False, **kwargs):
        super().__init__("gru", hidden_size, num_layers, layout, dropout, bidirectional,
                         input_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, dtype, use_sequence_length)


def _cell_begin_state(self, batch_size=0, func=None, ctx=None, **kwargs):
    """Zero states for ``batch_size`` sequences: a list of ``(N, H)`` arrays."""
    states = _janus.RecurrentCell.begin_state(self, batch_size, ctx)
    if func is None:
        return states
    return [func(shape=s.shape, **kwargs) for s in states]


def _cell_call(self, inputs, states):
    ys = _janus.Block.__call__(self, inputs, *_as_list(states, type(self).__name__))
    if isinstance(ys, _NDArray):  # a cell without states (DropoutCell)
        return ys, []
    return ys[0], list(ys[1:])


def _unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
            valid_length=None):
    """Runs ``length`` steps over ``inputs`` (one ``(N, T, C)``/``(T, N, C)`` array by layout,
    or a list of ``(N, C)`` arrays) from ``begin_state`` (zeros when None). Returns
    ``(outputs, states)``: outputs merged into one array along the time axis when
    ``merge_outputs`` (default: when the inputs were one array), else a list per step."""
    if valid_length is not None:
        raise NotSupportedError(f"{type(self).__name__}.unroll: valid_length is not supported")
    merged_in = isinstance(inputs, _NDArray)
    xs = [inputs] if merged_in else list(inputs)
    if merge_outputs is None:
        merge_outputs = merged_in
    states = [] if begin_state is None else _as_list(begin_state, type(self).__name__)
    outputs, states = self._unroll(length, xs, states, layout, bool(merge_outputs))
    return (outputs[0] if merge_outputs else outputs), states


for _cls in (_janus.GatedCell, _janus.SequentialRNNCell, _janus.BidirectionalCell,
             _janus.DropoutCell, _janus.ResidualCell, _janus.ZoneoutCell):
    _cls.begin_state = _cell_begin_state
    _cls.__call__ = _cell_call
    _cls.forward = _cell_call
    _cls.unroll = _unroll


class _GatedCell(_janus.GatedCell):
    def __init__(self, mode, hidden_size, input_size, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer):
        super().__init__(mode, hidden_size, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)

    __getattr__ = _own_param


class RNNCell(_GatedCell):
    """One Elman step: h' = activation(W_i x + b_i + W_h h + b_h); activation 'tanh' or 'relu'."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"RNNCell: activation '{activation}' is not supported, expected "
                             "'relu' or 'tanh'")
        super().__init__("rnn_" + activation, hidden_size, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)


class LSTMCell(_GatedCell):
    """One LSTM step; states [h, c]."""

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 activation="tanh", recurrent_activation="sigmoid", **kwargs):
        if activation != "tanh" or recurrent_activation != "sigmoid":
            raise NotSupportedError("LSTMCell: only activation='tanh' and "
                                    "recurrent_activation='sigmoid' are supported")
        super().__init__("lstm", hidden_size, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)


class GRUCell(_GatedCell):
    """One GRU step; states [h]."""

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 activation="tanh", recurrent_activation="sigmoid", **kwargs):
        if activation != "tanh" or recurrent_activation != "sigmoid":
            raise NotSupportedError("GRUCell: only activation='tanh' and "
                                    "recurrent_activation='sigmoid' are supported")
        super().__init__("gru", hidden_size, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer)


SequentialRNNCell = _janus.SequentialRNNCell
HybridSequentialRNNCell = _janus.SequentialRNNCell


class BidirectionalCell(_janus.BidirectionalCell):
    """``l_cell`` unrolled forward and ``r_cell`` backward, outputs concatenated on the feature
    axis, states l_cell's then r_cell's; parameters ``l_cell.*`` and ``r_cell.*``. It cannot
    be stepped, only unrolled."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(l_cell, r_cell)
        self._cells = (l_cell, r_cell)  # keeps the Python cells (and their classes) alive

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell cannot be stepped; use unroll")

    forward = __call__


class DropoutCell(_janus.DropoutCell):
    """Dropout of ``rate`` on the input in training; no states."""

    def __init__(self, rate, axes=(), **kwargs):
        if not isinstance(rate, (int, float)):
            raise TypeError(f"DropoutCell: rate must be a number, got {type(rate).__name__}")
        if axes:
            raise NotSupportedError("DropoutCell: axes (a mask shared along axes) is not "
                                    "supported")
        super().__init__(float(rate))


class ResidualCell(_janus.ResidualCell):
    """The base cell with its input added to its output; parameters ``base_cell.*``."""

    def __init__(self, base_cell):
        super().__init__(base_cell)
        self.base_cell = base_cell


class ZoneoutCell(_janus.ZoneoutCell):
    """Zoneout on the base cell in training: each output element keeps the previous step's with
    probability ``zoneout_outputs``, each state element its old value with probability
    ``zoneout_states``; parameters ``base_cell.*``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        super().__init__(base_cell, float(zoneout_outputs), float(zoneout_states))
        self.base_cell = base_cell
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
