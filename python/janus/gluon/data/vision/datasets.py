"""``gluon.data.vision.datasets``: Fashion-MNIST from the Debian package
``dataset-fashion-mnist`` (MXNet's other vision datasets, which it downloads, are not here)."""
from .... import _janus


def FashionMNIST(root=None, train=True, transform=None):
    """The training (``train``) or test set: samples ``(float32 [1, 28, 28] in [0, 1], int32
    label)``, read from ``root`` (default /usr/share/datasets/fashion-mnist). MXNet's
    ``~/.mxnet/...`` roots fall back to the default."""
    import os
    if root is not None and not os.path.exists(os.path.join(os.path.expanduser(root),
                                                            "train-images-idx3-ubyte.gz")):
        root = None
    ds = _janus.FashionMNIST(None if root is None else os.path.expanduser(root), train)
    return ds if transform is None else ds.transform(transform)
