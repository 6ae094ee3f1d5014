"""``gluon.metric`` (``mx.metric`` in MXNet 1.x): running figures over batches. Updates stay on
the engine (no wait per batch); ``get()`` waits for them. Accuracy and Loss are the C++
metrics (janus/nn/metric.h); the error metrics are means of per-element errors, computed the
same way. ``labels`` and ``preds`` are arrays or lists of arrays (one per device)."""
import math as _math

from .. import _janus


def _pairs(labels, preds, name):
    labels = labels if isinstance(labels, (list, tuple)) else [labels]
    preds = preds if isinstance(preds, (list, tuple)) else [preds]
    if len(labels) != len(preds):
        raise ValueError(f"{name}: {len(labels)} label arrays for {len(preds)} prediction "
                         "arrays, expected as many")
    return zip(labels, preds)


class EvalMetric:
    """The base: ``update(labels, preds)``, ``get() -> (name, value)``, ``reset()``."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = name
        self.reset()

    def update(self, labels, preds):
        raise NotImplementedError(f"{type(self).__name__}.update")

    def reset(self):
        self._acc = None

    @property
    def num_inst(self):
        return self._acc.count

    def get(self):
        """(name, value); the value is NaN before the first update."""
        return self.name, self._acc.get()

    def get_name_value(self):
        name, value = self.get()
        if isinstance(name, list):
            return list(zip(name, value))
        return [(name, value)]

    def __str__(self):
        return "EvalMetric: " + str(dict(self.get_name_value()))


class Accuracy(EvalMetric):
    """The fraction of samples whose predicted class (argmax over the last axis of the scores,
    or the predictions themselves when they are integer classes) equals the label."""

    def __init__(self, axis=1, name="accuracy", **kwargs):
        self.axis = axis
        super().__init__(name, **kwargs)

    def reset(self):
        self._acc = _janus._Accuracy()

    def update(self, labels, preds):
        for label, pred in _pairs(labels, preds, "Accuracy"):
            self._acc.update(label, pred)


class Loss(EvalMetric):
    """The mean of the losses given as ``preds`` (``labels`` are ignored)."""

    def __init__(self, name="loss", **kwargs):
        super().__init__(name, **kwargs)

    def reset(self):
        self._acc = _janus._MeanLoss()

    def update(self, _, preds):
        for pred in preds if isinstance(preds, (list, tuple)) else [preds]:
            self._acc.update(pred)


class _ElementError(EvalMetric):
    def reset(self):
        self._acc = _janus._MeanLoss()

    def _error(self, diff):
        raise NotImplementedError

    def update(self, labels, preds):
        for label, pred in _pairs(labels, preds, type(self).__name__):
            if label.size != pred.size:
                raise ValueError(f"{type(self).__name__}: labels of shape {label.shape} for "
                                 f"predictions of shape {pred.shape}, expected as many elements")
            self._acc.update(self._error(label.reshape(pred.shape).astype(pred.dtype) - pred))


class MAE(_ElementError):
    """The mean absolute error."""

    def __init__(self, name="mae", **kwargs):
        super().__init__(name, **kwargs)

    def _error(self, diff):
        return _janus.abs(diff)


class MSE(_ElementError):
    """The mean squared error."""

    def __init__(self, name="mse", **kwargs):
        super().__init__(name, **kwargs)

    def _error(self, diff):
        return _janus.square(diff)


class RMSE(MSE):
    """The square root of the mean squared error."""

    def __init__(self, name="rmse", **kwargs):
        super().__init__(name, **kwargs)

    def get(self):
        name, mse = super().get()
        return name, _math.sqrt(mse)


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` gives ([names], [values])."""

    def __init__(self, metrics=None, name="composite", **kwargs):
        self.metrics = [create(m) for m in (metrics or [])]
        super().__init__(name, **kwargs)

    def add(self, metric):
        self.metrics.append(create(metric))

    def reset(self):
        for m in getattr(self, "metrics", []):
            m.reset()

    @property
    def num_inst(self):
        return self.metrics[0].num_inst if self.metrics else 0

    def update(self, labels, preds):
        for m in self.metrics:
            m.update(labels, preds)

    def get(self):
        names, values = [], []
        for m in self.metrics:
            n, v = m.get()
            names.append(n)
            values.append(v)
        return names, values


_NAMES = {"acc": Accuracy, "accuracy": Accuracy, "loss": Loss, "mae": MAE, "mse": MSE,
          "rmse": RMSE}


def create(metric, *args, **kwargs):
    """A metric from a name ("acc", "loss", "mae", "mse", "rmse"), a metric (itself) or a list
    of them (a CompositeEvalMetric)."""
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, (list, tuple)):
        return CompositeEvalMetric(list(metric))
    if isinstance(metric, str) and metric.lower() in _NAMES:
        return _NAMES[metric.lower()](*args, **kwargs)
    raise ValueError(f"metric: {metric!r} is not known, expected one of {sorted(_NAMES)}, a "
                     "metric object or a list of them")
