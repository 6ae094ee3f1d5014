"""``gluon.data.vision``: Fashion-MNIST from the Debian package ``dataset-fashion-mnist``
(``datasets``) and the image ``transforms``."""
from . import datasets, transforms  # noqa: F401
from .datasets import FashionMNIST  # noqa: F401
