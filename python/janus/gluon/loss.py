"""``gluon.loss``: per-sample losses (shape [batch]) computed in C++."""
from .. import _janus

Loss = _janus.Loss
L2Loss = _janus.L2Loss
L1Loss = _janus.L1Loss
SoftmaxCrossEntropyLoss = _janus.SoftmaxCrossEntropyLoss
SoftmaxCELoss = SoftmaxCrossEntropyLoss
SigmoidBinaryCrossEntropyLoss = _janus.SigmoidBinaryCrossEntropyLoss
SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss
