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


# Losses composed in Python from the operators (hybridizable like the others).

def _batch_mean(x):
    """The mean over every axis but the first (the batch): shape [batch]."""
    if x.ndim <= 1:
        return x
    return _janus.mean(x.reshape((x.shape[0], -1)), [1], False)


def _like(label, pred):
    return label.reshape(pred.shape) if label.shape != pred.shape else label


class HuberLoss(Loss):
    """0.5 / rho * d^2 where |d| <= rho, |d| - 0.5 * rho elsewhere (d = pred - label)."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = float(rho)

    def forward(self, pred, label):
        from .. import numpy as np
        d = _janus.abs(pred - _like(label, pred))
        rho = self._rho
        return _batch_mean(np.where(d > rho, d - 0.5 * rho, (0.5 / rho) * _janus.square(d)))


class HingeLoss(Loss):
    """max(0, margin - pred * label), labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = float(margin)

    def forward(self, pred, label):
        return _batch_mean(_janus.relu(self._margin - pred * _like(label, pred)))


class SquaredHingeLoss(HingeLoss):
    """max(0, margin - pred * label)^2, labels -1 or 1."""

    def forward(self, pred, label):
        return _batch_mean(_janus.square(_janus.relu(self._margin - pred * _like(label, pred))))


class LogisticLoss(Loss):
    """log(1 + exp(-pred * label)); labels -1 or 1 ('signed') or 0 or 1 ('binary')."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format '{label_format}' is not known, "
                             "expected 'signed' or 'binary'")
        self._binary = label_format == "binary"

    def forward(self, pred, label):
        label = _like(label, pred)
        if self._binary:
            label = label * 2 - 1
        return _batch_mean(_janus.softplus(-(pred * label)))


class KLDivLoss(Loss):
    """label * (log(label) - log_prob), where log_prob is pred (from_logits) or
    log_softmax(pred, axis); averaged over each sample's elements."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def forward(self, pred, label):
        log_prob = pred if self._from_logits else _janus.log_softmax(pred, self._axis)
        label = _like(label, pred)
        return _batch_mean(label * (_janus.log(label + 1e-12) - log_prob))
