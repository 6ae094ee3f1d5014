"""``gluon.loss``: losses are blocks (``HybridBlock``s), as in MXNet 1.9: ``loss(pred, label,
sample_weight=None)`` gives the loss of each sample (the mean over every axis but
``batch_axis``, shape [batch]); ``hybridize()`` compiles it like any block; a Python subclass
of ``Loss`` defines ``hybrid_forward(self, F, pred, label, ...)`` (or ``forward``).

Weighting follows MXNet: the element-wise loss is multiplied by ``sample_weight`` (broadcast
against it; [batch] or [batch, 1] for one weight per sample) and by the scalar ``weight`` before the
mean over the non-batch axes. L2Loss, L1Loss, SoftmaxCrossEntropyLoss (integer labels on the
last axis) and SigmoidBinaryCrossEntropyLoss compute in C++ (janus/nn/loss.h) when no
sample_weight is given and batch_axis is 0; otherwise, and for every other loss, they are
composed here from the operators (hybridizable like the others)."""
import inspect as _inspect
import math as _math
import numbers as _numbers

from .. import _janus
from .nn import Block as _Block, HybridBlock as _HybridBlock

# MXNet's gluon.loss exports the base class its losses derive from.
HybridBlock = _HybridBlock


def _reduce_except(x, batch_axis, op=None):
    """The mean (or ``op``) over every axis of ``x`` but ``batch_axis``: shape [batch]."""
    op = op or _janus.mean
    if x.ndim <= 1:
        return x
    axes = [a for a in range(x.ndim) if a != batch_axis % x.ndim]
    return op(x, axes, False)


def _like(label, pred):
    """``label`` in ``pred``'s shape (MXNet's reshape_like: the same number of elements)."""
    if label.shape == pred.shape:
        return label
    if label.size != pred.size:
        raise ValueError(f"label of shape {label.shape} does not match prediction of shape "
                         f"{pred.shape} (expected as many elements)")
    return label.reshape(pred.shape)


def _takes_sample_weight(fn):
    try:
        return "sample_weight" in _inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class Loss(_HybridBlock):
    """The base of every loss: ``weight`` (a number or None) scales the loss, ``batch_axis``
    names the axis of the samples."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(**kwargs)
        if weight is not None and not isinstance(weight, _numbers.Number):
            raise TypeError(f"{type(self).__name__}: weight must be a number or None, got "
                            f"{type(weight).__name__}")
        if not isinstance(batch_axis, int):
            raise TypeError(f"{type(self).__name__}: batch_axis must be an int, got "
                            f"{type(batch_axis).__name__}")
        self._weight = weight
        self._batch_axis = batch_axis

    def __call__(self, *inputs, sample_weight=None):
        n = self._num_inputs()
        if len(inputs) == n + 1 and sample_weight is None:
            inputs, sample_weight = inputs[:n], inputs[n]
        if len(inputs) != n:
            raise TypeError(f"{type(self).__name__}: expected {n} input arrays (and an "
                            f"optional sample_weight), got {len(inputs)}")
        if sample_weight is None:
            return _Block.__call__(self, *inputs)
        fn = type(self).forward if type(self).forward is not _HybridBlock.forward \
            else getattr(self, "hybrid_forward", None)
        if fn is not None and _takes_sample_weight(fn):
            return _Block.__call__(self, *inputs, sample_weight)
        # A subclass whose forward knows no sample_weight: weight what it returns.
        out = _Block.__call__(self, *inputs)
        return out * (sample_weight.reshape(out.shape) if sample_weight.size == out.size
                      else sample_weight)

    def _num_inputs(self):
        """How many arrays the loss takes before sample_weight (pred and label; three for
        CosineEmbeddingLoss)."""
        return 2

    def _weighted_mean(self, loss, sample_weight, op=None):
        """MXNet's weighting then the mean (or ``op``) over the non-batch axes."""
        if sample_weight is not None:
            loss = loss * self._per_sample(sample_weight, loss)
        if self._weight is not None:
            loss = loss * self._weight
        return _reduce_except(loss, self._batch_axis, op)

    def _per_sample(self, sample_weight, loss):
        """A 1-D sample_weight of one weight per sample, against a loss of more axes, is put on
        the batch axis (MXNet would broadcast it along the last axis instead, silently mixing
        samples); any other shape broadcasts as given."""
        if sample_weight.ndim == 1 and loss.ndim > 1 \
                and sample_weight.shape[0] == loss.shape[self._batch_axis]:
            shape = [1] * loss.ndim
            shape[self._batch_axis] = sample_weight.shape[0]
            return sample_weight.reshape(tuple(shape))
        return sample_weight

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"


class _CppLoss(Loss):
    """A loss that the C++ loss ``self._impl`` computes (already reduced to [batch], batch
    axis 0) when it can; ``_elementwise`` otherwise."""

    _impl = None

    def _cpp_applies(self, pred, label):
        return self._batch_axis == 0

    def forward(self, pred, label, sample_weight=None):
        if sample_weight is None and self._cpp_applies(pred, label):
            out = self._impl(pred, label)
            return out if self._weight is None or self._weight == 1 else out * self._weight
        return self._weighted_mean(self._elementwise(pred, label), sample_weight)


class L2Loss(_CppLoss):
    """weight / 2 * (label - pred)^2, averaged over each sample's elements."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.L2Loss()

    def forward(self, pred, label, sample_weight=None):
        if sample_weight is None and self._batch_axis == 0:
            out = self._impl(pred, label)  # 0.5 * mean((pred - label)^2)
            return out if self._weight == 1 else out * self._weight
        loss = _janus.square(_like(label, pred) - pred)
        if sample_weight is not None:
            loss = loss * self._per_sample(sample_weight, loss)
        return _reduce_except(loss * (self._weight / 2), self._batch_axis)


class L1Loss(_CppLoss):
    """weight * |label - pred|, averaged over each sample's elements."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._impl = _janus.L1Loss()

    def _elementwise(self, pred, label):
        return _janus.abs(_like(label, pred) - pred)


class SigmoidBinaryCrossEntropyLoss(_CppLoss):
    """Binary cross-entropy of sigmoid(pred) (or of pred itself with ``from_sigmoid``), with
    MXNet's stable formula; ``pos_weight`` (given at the call, broadcast against pred) weights
    the positive term."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = bool(from_sigmoid)
        self._impl = _janus.SigmoidBinaryCrossEntropyLoss(self._from_sigmoid)

    def __call__(self, pred, label, sample_weight=None, pos_weight=None):
        if pos_weight is None:
            return super().__call__(pred, label, sample_weight=sample_weight)
        if sample_weight is None:
            sample_weight = _janus.ones((1,) * pred.ndim, None, pred.ctx)
        return _Block.__call__(self, pred, label, sample_weight, pos_weight)

    def forward(self, pred, label, sample_weight=None, pos_weight=None):
        if pos_weight is None:
            return super().forward(pred, label, sample_weight)
        return self._weighted_mean(self._elementwise(pred, label, pos_weight), sample_weight)

    def _elementwise(self, pred, label, pos_weight=None):
        z = _like(label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                # max(x, 0) - x z + log(1 + exp(-|x|))
                return _janus.relu(pred) - pred * z + _janus.softplus(-_janus.abs(pred))
            # x - x z + (1 + (pos_weight - 1) z) (log(1 + exp(-|x|)) + max(-x, 0))
            log_weight = (pos_weight - 1) * z + 1
            return pred - pred * z + log_weight * (_janus.softplus(-_janus.abs(pred))
                                                   + _janus.relu(-pred))
        eps = 1e-12
        positive = _janus.log(pred + eps) * z
        if pos_weight is not None:
            positive = positive * pos_weight
        return -(positive + _janus.log(1.0 - pred + eps) * (1.0 - z))


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(_CppLoss):
    """-log softmax(pred)[label] along ``axis`` (``sparse_label``: integer class labels), or
    -sum(label * log softmax(pred)) for label distributions; ``from_logits``: pred already holds
    log-probabilities."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if not isinstance(axis, int):
            raise TypeError(f"SoftmaxCrossEntropyLoss: axis must be an int, got "
                            f"{type(axis).__name__}")
        self._axis = axis
        self._sparse_label = bool(sparse_label)
        self._from_logits = bool(from_logits)
        self._impl = _janus.SoftmaxCrossEntropyLoss()

    def _cpp_applies(self, pred, label):
        return (self._batch_axis == 0 and self._sparse_label and not self._from_logits
                and pred.ndim == 2 and self._axis in (-1, 1))

    def _elementwise(self, pred, label):
        log_prob = pred if self._from_logits else _janus.log_softmax(pred, self._axis)
        if self._sparse_label:
            from .. import numpy_extension as npx
            return -npx.pick(log_prob, label, axis=self._axis, keepdims=True)
        return -(log_prob * _like(label, pred)).sum(axis=self._axis, keepdims=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class HuberLoss(Loss):
    """0.5 / rho * d^2 where |d| <= rho, |d| - 0.5 * rho elsewhere (d = label - pred)."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if rho <= 0:
            raise ValueError(f"HuberLoss: rho is {rho}, expected a positive value")
        self._rho = float(rho)

    def forward(self, pred, label, sample_weight=None):
        from .. import numpy as np
        d = _janus.abs(_like(label, pred) - pred)
        rho = self._rho
        loss = np.where(d > rho, d - 0.5 * rho, (0.5 / rho) * _janus.square(d))
        return self._weighted_mean(loss, sample_weight)


class HingeLoss(Loss):
    """max(0, margin - pred * label), labels -1 or 1."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = float(margin)

    def forward(self, pred, label, sample_weight=None):
        loss = _janus.relu(self._margin - pred * _like(label, pred))
        return self._weighted_mean(loss, sample_weight)


class SquaredHingeLoss(HingeLoss):
    """max(0, margin - pred * label)^2, labels -1 or 1."""

    def forward(self, pred, label, sample_weight=None):
        loss = _janus.square(_janus.relu(self._margin - pred * _like(label, pred)))
        return self._weighted_mean(loss, sample_weight)


class LogisticLoss(Loss):
    """log(1 + exp(-pred * label)); labels -1 or 1 ('signed') or 0 or 1 ('binary')."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format '{label_format}' is not known, "
                             "expected 'signed' or 'binary'")
        self._signed = label_format == "signed"

    def forward(self, pred, label, sample_weight=None):
        z = _like(label, pred)
        if self._signed:
            z = (z + 1.0) / 2.0  # to 0 or 1
        # The stable form: max(x, 0) - x z + log(1 + exp(-|x|))
        loss = _janus.relu(pred) - pred * z + _janus.softplus(-_janus.abs(pred))
        return self._weighted_mean(loss, sample_weight)


class KLDivLoss(Loss):
    """label * (log(label) - log_prob), where log_prob is pred (from_logits) or
    log_softmax(pred, axis); summed over each sample's elements (as MXNet 1.9)."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def forward(self, pred, label, sample_weight=None):
        log_prob = pred if self._from_logits else _janus.log_softmax(pred, self._axis)
        label = _like(label, pred)
        loss = label * (_janus.log(label + 1e-12) - log_prob)
        return self._weighted_mean(loss, sample_weight, _janus.sum)


class TripletLoss(Loss):
    """max(0, sum(|positive - pred|^2 - |negative - pred|^2) + margin) per sample (the sum over
    every axis but batch_axis). Called as ``loss(pred, positive, negative)``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = float(margin)

    def _num_inputs(self):
        return 3

    def forward(self, pred, positive, negative):
        positive, negative = _like(positive, pred), _like(negative, pred)
        d = _janus.square(positive - pred) - _janus.square(negative - pred)
        loss = _janus.relu(_reduce_except(d, self._batch_axis, _janus.sum) + self._margin)
        return loss if self._weight is None else loss * self._weight


class PoissonNLLLoss(Loss):
    """exp(pred) - target * pred (``from_logits``: pred is the log of the rate) or
    pred - target * log(pred + epsilon); ``compute_full`` adds Stirling's approximation
    target log target - target + 0.5 log(2 pi target) where target > 1. MXNet returns the mean
    over every element (a scalar), and so does this."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = bool(from_logits)
        self._compute_full = bool(compute_full)

    def forward(self, pred, target, sample_weight=None, epsilon=1e-08):
        target = _like(target, pred)
        if self._from_logits:
            loss = _janus.exp(pred) - target * pred
        else:
            loss = pred - target * _janus.log(pred + epsilon)
        if self._compute_full:
            stirling = target * _janus.log(target) - target \
                + 0.5 * _janus.log(target * (2 * _math.pi))
            # A where rather than MXNet's product with (target > 1): at target 0 the product
            # is 0 * -inf = nan, the where gives 0.
            from .. import numpy as np
            loss = loss + np.where(target > 1, stirling, 0.0)
        if sample_weight is not None:
            loss = loss * self._per_sample(sample_weight, loss)
        if self._weight is not None:
            loss = loss * self._weight
        return _janus.mean(loss, [], False)


class CosineEmbeddingLoss(Loss):
    """1 - cos(input1, input2) for label 1, max(0, cos(input1, input2) - margin) for label -1
    (the cosine over the last axis); shape [batch, 1], as MXNet. Called as
    ``loss(input1, input2, label, sample_weight=None)``."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = float(margin)

    def _num_inputs(self):
        return 3

    def forward(self, input1, input2, label, sample_weight=None):
        input1 = _like(input1, input2)
        label = label.reshape((-1, 1))
        dot = (input1 * input2).sum(axis=-1).reshape((-1, 1))
        norms = _janus.norm(input1, -1, False) * _janus.norm(input2, -1, False)
        cos = dot / _janus.maximum(norms.reshape((-1, 1)), 1e-12)
        loss = (1 - cos) * (label == 1) + _janus.relu((cos - self._margin) * (label == -1))
        if sample_weight is not None:
            loss = loss * self._per_sample(sample_weight, loss)
        return loss if self._weight is None else loss * self._weight


class CTCLoss(Loss):
    """Connectionist Temporal Classification loss, as MXNet 1.9's: ``loss(pred, label,
    pred_lengths=None, label_lengths=None, sample_weight=None)`` gives ``-log p(label | pred)``
    per sequence, shape ``(batch,)``. ``pred`` holds unnormalised scores ``(N, T, C)`` ('NTC')
    or ``(T, N, C)`` ('TNC'); class ``C - 1`` is the blank, so C is the alphabet size plus one.
    ``label`` ``(N, L)`` ('NT') or ``(L, N)`` ('TN') holds classes in ``[0, C - 1)``, each
    sequence's labels ending at its first -1 unless ``label_lengths`` is given; ``pred_lengths``
    (default: all T) gives each sequence's steps. A sequence whose label has no alignment in its
    steps (too short for the label and its repeats) gets 0 and no gradient, as in MXNet."""

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"CTCLoss: layout '{layout}' is not supported, expected 'NTC' or "
                             "'TNC'")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"CTCLoss: label_layout '{label_layout}' is not supported, "
                             "expected 'NT' or 'TN'")
        super().__init__(weight, label_layout.find("N"), **kwargs)
        self._layout = layout
        self._label_layout = label_layout

    def _num_inputs(self):
        return 4

    def __call__(self, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        from .. import numpy as np
        if pred.ndim != 3 or label.ndim != 2:
            raise ValueError(f"CTCLoss: pred has shape {pred.shape} and label {label.shape}, "
                             f"expected pred ({', '.join(self._layout)}) and label "
                             f"({', '.join(self._label_layout)})")
        ntc = self._layout == "NTC"
        n, t = (pred.shape[0], pred.shape[1]) if ntc else (pred.shape[1], pred.shape[0])
        if pred_lengths is None:
            pred_lengths = np.full((n,), t, dtype="int32", ctx=pred.ctx)
        if label_lengths is None:
            labels = label if self._label_layout == "NT" else _janus.transpose(label, [1, 0])
            # The labels before the first -1 (a column of -1 after the last for full rows).
            padded = np.concatenate([labels, np.full((labels.shape[0], 1), -1, dtype=labels.dtype,
                                                     ctx=labels.ctx)], axis=1)
            label_lengths = np.argmax((padded < 0).astype("float32"), axis=1)
        return super().__call__(pred, label, pred_lengths, label_lengths,
                                sample_weight=sample_weight)

    def forward(self, pred, label, pred_lengths, label_lengths, sample_weight=None):
        if self._layout == "NTC":
            pred = _janus.transpose(pred, [1, 0, 2])
        if self._batch_axis == 1:
            label = _janus.transpose(label, [1, 0])
        loss = _janus.ctc_loss(pred, label, pred_lengths, label_lengths)
        if sample_weight is not None:
            loss = loss * sample_weight.reshape(loss.shape) if sample_weight.size == loss.size \
                else loss * sample_weight
        return loss if self._weight is None else loss * self._weight

    def __repr__(self):
        return f"CTCLoss(layout={self._layout}, label_layout={self._label_layout}, " \
               f"w={self._weight})"


class SDMLLoss(Loss):
    """Batchwise Smoothed Deep Metric Learning loss (Bonadiman et al. 2019), as MXNet 1.9's:
    ``loss(x1, x2)`` for aligned batches ``(N, D)`` (x1[i] and x2[i] a positive pair, the other
    rows negatives) is the KL divergence, per row, between the identity matrix smoothed by
    ``smoothing_parameter`` (1 - s on the diagonal, s / (N - 1) elsewhere) and the softmax of
    the negative squared distances between the rows; shape ``(N,)``. As in MXNet, ``weight``
    is accepted and not applied."""

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.smoothing_parameter = smoothing_parameter

    def forward(self, x1, x2):
        if x1.shape != x2.shape or x1.ndim != 2:
            raise ValueError(f"SDMLLoss: x1 has shape {x1.shape} and x2 {x2.shape}, expected "
                             "the same (batch, dim) shape")
        n, dim = x1.shape
        if n < 2:
            raise ValueError(f"SDMLLoss: a batch of {n}, expected at least 2 pairs (the other "
                             "rows are the negatives)")
        diff = x1.reshape((n, 1, dim)) - x2.reshape((1, n, dim))
        distances = _janus.sum(_janus.square(diff), [2], False)
        log_prob = _janus.log_softmax(-distances, 1)
        s = self.smoothing_parameter
        from .. import numpy as np
        gold = np.eye(n, ctx=x1.ctx)
        labels = gold * (1 - s) + (1 - gold) * (s / (n - 1))
        loss = labels * (_janus.log(labels + 1e-12) - log_prob)
        return _janus.sum(loss, [1], False)

    def __repr__(self):
        return f"SDMLLoss(smoothing_parameter={self.smoothing_parameter})"
