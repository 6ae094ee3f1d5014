"""``gluon.rnn``: recurrent layers and cells, MXNet 1.9's names and call forms over the C++ ones
(janus/nn/rnn.h, composed of registered operators, so that autograd, hybridize and export work
as for any layer). Cells that wrap cells (BidirectionalCell, ResidualCell, ZoneoutCell) name
their children's parameters as MXNet does: ``l_cell.i2h_weight``, ``base_cell.h2h_bias``.

Layers run whole sequences: ``out = layer(x)`` or ``out, states = layer(x, states)``, with x
``(T, N, C)`` ('TNC') or ``(N, T, C)`` ('NTC') and each state ``(num_layers * D, N, H)``.
Cells run one step: ``out, states = cell(x, states)``; ``unroll`` runs several. Parameter names
(``l0_i2h_weight``, ``r0_h2h_bias``, a cell's ``i2h_weight``) and gate order (LSTM: i, f, c, o;
GRU: r, z, n) are MXNet's, so parameters saved by MXNet load and give its numbers.

Cells written in Python subclass ``RecurrentCell`` or ``HybridRecurrentCell`` (or
``ModifierCell``, for one that wraps a cell) as in MXNet 1.9: ``state_info`` and
``forward(inputs, states)`` or ``hybrid_forward(F, inputs, states, **params)``; ``unroll``,
``begin_state`` and the wrapping cells then work on them as on the built-in ones.
``LSTMPCell`` and ``VariationalDropoutCell`` are ``gluon.contrib.rnn``'s in MXNet 1.9 (and
``gluon.rnn``'s in MXNet 2); both modules have them here."""

from .. import _janus
from ..base import NotSupportedError

_NDArray = _janus.ndarray


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


def _batch_size(inputs, layout):
    if isinstance(inputs, _NDArray) and inputs.ndim == 3 and layout in ("NTC", "TNC"):
        return inputs.shape[layout.index("N")]
    if isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], _NDArray):
        return inputs[0].shape[0]
    return None


def _unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
            valid_length=None):
    """Runs ``length`` steps over ``inputs`` (one ``(N, T, C)``/``(T, N, C)`` array by layout,
    or a list of ``(N, C)`` arrays) from ``begin_state`` (``begin_state()``'s zeros when None).
    Returns ``(outputs, states)``: outputs merged into one array along the time axis when
    ``merge_outputs`` (default: when the inputs were one array), else a list per step.
    ``valid_length`` ``(N,)``: sequence n has its first valid_length[n] steps; the outputs past
    them are zeros and the states returned are those after its last valid step."""
    cls = type(self).__name__
    if hasattr(self, "reset"):
        self.reset()
    merged_in = isinstance(inputs, _NDArray)
    xs = [inputs] if merged_in else list(inputs)
    if merge_outputs is None:
        merge_outputs = merged_in
    if valid_length is not None and not isinstance(valid_length, _NDArray):
        raise TypeError(f"{cls}.unroll: valid_length must be an ndarray of shape (batch_size,), "
                        f"got {type(valid_length).__name__}")
    if begin_state is None:
        states = []
        n = _batch_size(inputs, layout)
        if isinstance(self, RecurrentCell) and n:  # a Python cell: its own begin_state
            states = self.begin_state(batch_size=n)
    else:
        states = _as_list(begin_state, cls)
    outputs, states = self._unroll(length, xs, states, layout, bool(merge_outputs),
                                   valid_length)
    return (outputs[0] if merge_outputs else outputs), states


def _cell_state_info(self, batch_size=0):
    """One ``{'shape': (N, H), '__layout__': 'NC'}`` per state."""
    return [{"shape": s, "__layout__": "NC"} for s in self._state_shapes(batch_size)]


def _no_reset(self):
    pass


def _sequential_reset(self):
    for cell in self:
        if hasattr(cell, "reset"):
            cell.reset()


for _cls in (_janus.GatedCell, _janus.LSTMPCell, _janus.SequentialRNNCell,
             _janus.BidirectionalCell, _janus.DropoutCell, _janus.ResidualCell,
             _janus.ZoneoutCell):
    _cls.begin_state = _cell_begin_state
    _cls.state_info = _cell_state_info
    _cls.__call__ = _cell_call
    _cls.forward = _cell_call
    _cls.unroll = _unroll
    if not hasattr(_cls, "reset"):
        _cls.reset = _no_reset
_janus.SequentialRNNCell.reset = _sequential_reset


class RecurrentCell(_janus.RecurrentCell):
    """The base of a cell written in Python (MXNet 1.9's ``gluon.rnn.RecurrentCell``). A subclass
    defines ``state_info(batch_size)`` (a list of ``{'shape': (batch_size, ...)}``, one per
    state) and ``forward(inputs, states)`` returning ``(output, new_states)``; it gets
    ``begin_state``, ``unroll`` (with ``valid_length``) and ``cell(x, states)``, and can be put
    in SequentialRNNCell, BidirectionalCell and the modifier cells. Parameters and child cells
    assigned to its attributes are registered (``self.weight = self.params.get(...)``)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix, params)
        self._modified = False
        self.reset()

    def reset(self):
        """Called by unroll before the first step: clears what a cell keeps between steps
        (counters, masks) here and in its child cells."""
        self._init_counter = -1
        self._counter = -1
        for value in list(vars(self).values()):
            if isinstance(value, _janus.RecurrentCell) and hasattr(value, "reset"):
                value.reset()

    def state_info(self, batch_size=0):
        raise NotImplementedError(f"{type(self).__name__}: a recurrent cell must define "
                                  "state_info(batch_size)")

    def begin_state(self, batch_size=0, func=None, ctx=None, **kwargs):
        """The states for ``batch_size`` sequences, from ``state_info``: zeros, or
        ``func(shape=..., **kwargs)`` for each."""
        if func is None:
            return _janus.RecurrentCell.begin_state(self, batch_size, ctx)
        states = []
        for info in self.state_info(batch_size):
            args = {k: v for k, v in info.items() if not k.startswith("__")}
            args.update(kwargs)
            states.append(func(**args))
        return states

    __call__ = _cell_call
    unroll = _unroll


class HybridRecurrentCell(RecurrentCell):
    """A RecurrentCell that may define MXNet 1.x's ``hybrid_forward(F, inputs, states,
    **params)`` instead of ``forward`` (F as HybridBlock's: the legacy operators over np and
    npx; params are the Parameters assigned to its attributes, by name). ``hybridize()`` traces
    each step."""

    def forward(self, inputs, states):
        from .nn import _call_hybrid_forward
        return _call_hybrid_forward(self, (inputs, states))


class ModifierCell(HybridRecurrentCell):
    """A cell that wraps ``base_cell`` (its child ``base_cell``; its states are the base cell's):
    a subclass defines ``hybrid_forward(F, inputs, states)`` (or ``forward``), calling
    ``self.base_cell(inputs, states)``."""

    def __init__(self, base_cell):
        if not isinstance(base_cell, _janus.RecurrentCell):
            raise TypeError(f"{type(self).__name__}: base_cell must be a recurrent cell, got "
                            f"{type(base_cell).__name__}")
        super().__init__()
        self.base_cell = base_cell

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size=0, func=None, ctx=None, **kwargs):
        return self.base_cell.begin_state(batch_size=batch_size, func=func, ctx=ctx, **kwargs)

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError(f"{type(self).__name__}: a modifier cell must define "
                                  "hybrid_forward(F, inputs, states) or forward(inputs, states)")

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


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
    """Dropout of ``rate`` on the input in training; no states. ``axes``: the axes along which
    one mask is shared (of a step's ``(N, C)``, or, when unroll merges its outputs, of the
    whole ``(N, T, C)``/``(T, N, C)`` sequence, as in MXNet); unroll ignores valid_length, as
    MXNet's does."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        if not isinstance(rate, (int, float)):
            raise TypeError(f"DropoutCell: rate must be a number, got {type(rate).__name__}")
        if isinstance(axes, int):
            axes = (axes,)
        if not all(isinstance(a, int) for a in axes):
            raise TypeError(f"DropoutCell: axes must be a tuple of ints, got {axes!r}")
        super().__init__(float(rate), list(axes))
        self._rate = rate
        self._axes = tuple(axes)

    def __repr__(self):
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"


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


class LSTMPCell(_janus.LSTMPCell):
    """MXNet's contrib LSTMPCell: an LSTM step (gates i, f, c, o) whose hidden state h is
    projected by ``h2r_weight`` ``(projection_size, hidden_size)`` to r, the output and the
    recurrent input. States ``[r (N, P), c (N, H)]``; parameters ``i2h_weight``,
    ``h2h_weight`` ``(4 H, P)``, ``h2r_weight``, ``i2h_bias``, ``h2h_bias``."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, projection_size, input_size, i2h_weight_initializer,
                         h2h_weight_initializer, h2r_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer)

    __getattr__ = _own_param


class VariationalDropoutCell(ModifierCell):
    """MXNet's contrib VariationalDropoutCell: in training, dropout on the base cell's inputs
    (``drop_inputs``), on its first state (``drop_states``) and on its outputs
    (``drop_outputs``) with one mask each, drawn at the first step and kept for every step
    until ``reset()`` (which unroll calls first; call it between sequences stepped by hand).
    Outside training it is the base cell. A hybridized one cannot run in training (its masks
    live between calls); parameters ``base_cell.*``."""

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        for what, p in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                        ("drop_outputs", drop_outputs)):
            if not isinstance(p, (int, float)) or not 0 <= p < 1:
                raise ValueError(f"VariationalDropoutCell: {what} is {p!r}, expected a number "
                                 "in [0, 1)")
        if drop_states and isinstance(base_cell, _janus.BidirectionalCell):
            raise ValueError("VariationalDropoutCell: a BidirectionalCell cannot be stepped, so "
                             "it takes no state dropout; wrap the cells under it instead")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    @staticmethod
    def _mask(like, p):
        from .. import numpy as np, numpy_extension as npx
        return npx.dropout(np.ones_like(like), p=p)

    def forward(self, inputs, states):
        from ..autograd import is_training
        drops = self.drop_inputs or self.drop_states or self.drop_outputs
        if not drops or not is_training():
            return self.base_cell(inputs, states)
        if self._hybridized:
            raise NotImplementedError("VariationalDropoutCell: a hybridized variational dropout "
                                      "cell cannot run in training (its masks live between "
                                      "steps); do not hybridize it")
        states = list(states)
        if self.drop_states:
            if self.drop_states_mask is None:
                self.drop_states_mask = self._mask(states[0], self.drop_states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            if self.drop_inputs_mask is None:
                self.drop_inputs_mask = self._mask(inputs, self.drop_inputs)
            inputs = inputs * self.drop_inputs_mask
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = self._mask(output, self.drop_outputs)
            output = output * self.drop_outputs_mask
        return output, next_states

    def __repr__(self):
        return (f"VariationalDropoutCell(p_out = {self.drop_outputs}, p_state = "
                f"{self.drop_states})")
