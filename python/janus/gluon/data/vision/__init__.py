"""``gluon.data.vision``: the datasets (Fashion-MNIST from the Debian package
``dataset-fashion-mnist``; MNIST, CIFAR-10, CIFAR-100 from MXNet's files; ImageFolderDataset)
and the image ``transforms``."""
from . import datasets, transforms  # noqa: F401
from .datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, ImageFolderDataset  # noqa: F401
