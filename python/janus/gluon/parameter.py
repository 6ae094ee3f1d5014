"""Parameters: named learnable arrays with gradients, held in C++."""
from .. import _janus

Parameter = _janus.Parameter
ParameterDict = _janus.ParameterDict


class Constant(Parameter):
    """MXNet's ``gluon.Constant(name, value)``: a parameter that holds ``value`` (an array, a
    NumPy array or nested lists; float32 unless it is a Janus array of another dtype) and gets no
    gradient. ``initialize()`` gives it ``value`` whatever initializer it is passed."""

    def __init__(self, name, value):
        if value is None:
            raise ValueError(f"Constant: no value given for constant '{name}'")
        from .. import numpy as np
        value = value if isinstance(value, np.ndarray) else np.array(value)
        super().__init__(name, shape=value.shape, init=_janus.init_array(value),
                         dtype=value.dtype, grad_req="null")
        self.value = value
