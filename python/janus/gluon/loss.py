"""``gluon.loss``: losses are blocks (``HybridBlock``s), as in MXNet: ``loss(pred, label)``
gives the per-sample loss (shape [batch]); ``hybridize()`` compiles it like any block; a Python
subclass of ``Loss`` defines ``hybrid_forward(self, F, pred, label)`` (or ``forward``). The
built-in losses compute in C++ (janus/nn/loss.h)."""
from .. import _janus
from .nn import Block as _Block, HybridBlock as _HybridBlock


class Loss(_HybridBlock):
    """The base of every loss. ``weight`` scales the loss (None: 1); ``sample_weight``, given
    at the call, multiplies each sample's loss."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(**kwargs)
        if batch_axis != 0:
            raise NotImplementedError(f"{type(self).__name__}: batch_axis={batch_axis}: only "
                                      "0 (the first axis) is supported")
        self._weight = weight
        self._batch_axis = batch_axis

    def __call__(self, pred, label, sample_weight=None):
        out = _Block.__call__(self, pred, label)
        if self._weight is not None and self._weight != 1:
            out = out * self._weight
        if sample_weight is not None:
            out = out * sample_weight.reshape(out.shape) if sample_weight.size == out.size \
                else out * sample_weight
        return out

    def __repr__(self):
        return f"{type(self).__name__}()"


class _BuiltinLoss(Loss):
    """A loss computed by the C++ loss ``self._impl``."""

    _impl = None

    def forward(self, pred, label):
        return self._impl(pred, label)


class L2Loss(_BuiltinLoss):
    """0.5 * weight * (pred - label)^2, averaged over each sample's elements."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.L2Loss()


class L1Loss(_BuiltinLoss):
    """weight * |pred - label|, averaged over each sample's elements."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.L1Loss()


class SoftmaxCrossEntropyLoss(_BuiltinLoss):
    """-log softmax(pred)[label] for integer class labels (sparse_label, axis=-1)."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.SoftmaxCrossEntropyLoss(axis, sparse_label, from_logits)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class SigmoidBinaryCrossEntropyLoss(_BuiltinLoss):
    """Binary cross-entropy of sigmoid(pred) (or of pred itself with from_sigmoid)."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.SigmoidBinaryCrossEntropyLoss(from_sigmoid)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss
