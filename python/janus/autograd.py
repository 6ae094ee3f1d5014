"""``autograd``: recording operator calls and running them backwards (MXNet's names)."""
from . import _janus


def record(train_mode=True):
    """``with autograd.record():`` records the operator calls on arrays that need gradients."""
    return _janus._RecordScope(train_mode)


def pause(train_mode=False):
    """``with autograd.pause():`` stops recording inside a ``record`` scope."""
    return _janus._PauseScope(train_mode)


def train_mode():
    """Training behaviour (dropout, batch norm) without recording."""
    return _janus._PauseScope(True)


def predict_mode():
    """Inference behaviour without recording."""
    return _janus._PauseScope(False)


def is_recording():
    return _janus.is_recording()


def is_training():
    return _janus.is_training()


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Gradients of ``heads`` into the ``.grad`` of every array given ``attach_grad``."""
    if not isinstance(heads, (list, tuple)):
        heads = [heads]
    if head_grads is None:
        head_grads = []
    elif not isinstance(head_grads, (list, tuple)):
        head_grads = [head_grads]
    _janus.backward(list(heads), [g for g in head_grads if g is not None], retain_graph)


def mark_variables(variables, gradients=None, grad_reqs="write"):
    if not isinstance(variables, (list, tuple)):
        variables = [variables]
    reqs = grad_reqs if isinstance(grad_reqs, (list, tuple)) else [grad_reqs] * len(variables)
    for v, r in zip(variables, reqs):
        v.attach_grad(r)
