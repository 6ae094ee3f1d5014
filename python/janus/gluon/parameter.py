"""Parameters: named learnable arrays with gradients, held in C++."""
from .. import _janus

Parameter = _janus.Parameter
ParameterDict = _janus.ParameterDict
