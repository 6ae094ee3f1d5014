"""Optimizers (MXNet's ``mx.optimizer``): a name and its hyperparameters, which the C++
optimizer is built from where one is used (``gluon.Trainer``, ``KVStore.set_optimizer``)."""

_PARAMS = ("learning_rate", "momentum", "wd", "beta1", "beta2", "epsilon", "clip_gradient",
           "rescale_grad")


class Optimizer:
    """The optimizer ``name`` ("sgd", "adam") with ``params`` (learning_rate, momentum, wd, ...)."""

    def __init__(self, name, **params):
        unknown = sorted(set(params) - set(_PARAMS))
        if unknown:
            raise ValueError(f"optimizer '{name}': parameters {unknown} are not known, expected "
                             f"some of {list(_PARAMS)}")
        self.name = name
        self.params = {k: float(v) for k, v in params.items() if v is not None}

    @property
    def learning_rate(self):
        return self.params.get("learning_rate", 0.01)

    def __repr__(self):
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, **params):
        super().__init__("sgd", learning_rate=learning_rate, momentum=momentum, **params)


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, **params):
        super().__init__("adam", learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, **params)


def create(name, **params):
    """``mx.optimizer.create('sgd', learning_rate=0.1)``."""
    table = {"sgd": SGD, "adam": Adam}
    if name.lower() not in table:
        raise ValueError(f"optimizer '{name}' is not known, expected one of {sorted(table)}")
    return table[name.lower()](**params)
