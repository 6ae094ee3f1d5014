"""Inception v3 (Szegedy et al. 2015) with MXNet 1.9's structure: ``features`` (the stem, the
mixed blocks A1-A3, B, C1-C4, D, E1-E2 as Concurrents of branches joined on the channel axis,
an 8x8 average pooling: it needs 299x299 inputs) and ``output``. Every convolution is a
Sequential of the convolution (no bias), batch norm (epsilon 1e-3) and ReLU."""
from ... import nn
from ..model_store import load_pretrained


def _basic_conv(in_channels, channels, kernel_size, strides=None, padding=None):
    kwargs = {}
    if strides is not None:
        kwargs["strides"] = strides
    if padding is not None:
        kwargs["padding"] = padding
    out = nn.HybridSequential()
    out.add(nn.Conv2D(channels, kernel_size, use_bias=False, in_channels=in_channels, **kwargs),
            nn.BatchNorm(epsilon=0.001, in_channels=channels), nn.Activation("relu"))
    return out


def _branch(in_channels, pool, *convs):
    """(A Sequential, its output channels): an optional pooling ('avg': 3x3 stride 1 padded,
    'max': 3x3 stride 2), then one _basic_conv per (channels, kernel_size, strides, padding)
    tuple."""
    out = nn.HybridSequential()
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_basic_conv(in_channels, *conv))
        in_channels = conv[0]
    return out, in_channels


def _concat(*branches):
    """(A Concurrent of the branches on the channel axis, its output channels)."""
    out = nn.HybridConcurrent(axis=1)
    out.add(*(b for b, _ in branches))
    return out, sum(c for _, c in branches)


def _mixed_a(c, pool_features):
    return _concat(_branch(c, None, (64, 1)),
                   _branch(c, None, (48, 1), (64, 5, None, 2)),
                   _branch(c, None, (64, 1), (96, 3, None, 1), (96, 3, None, 1)),
                   _branch(c, "avg", (pool_features, 1)))


def _mixed_b(c):
    return _concat(_branch(c, None, (384, 3, 2)),
                   _branch(c, None, (64, 1), (96, 3, None, 1), (96, 3, 2)),
                   _branch(c, "max"))


def _mixed_c(c, c7):
    return _concat(_branch(c, None, (192, 1)),
                   _branch(c, None, (c7, 1), (c7, (1, 7), None, (0, 3)),
                           (192, (7, 1), None, (3, 0))),
                   _branch(c, None, (c7, 1), (c7, (7, 1), None, (3, 0)),
                           (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                           (192, (1, 7), None, (0, 3))),
                   _branch(c, "avg", (192, 1)))


def _mixed_d(c):
    return _concat(_branch(c, None, (192, 1), (320, 3, 2)),
                   _branch(c, None, (192, 1), (192, (1, 7), None, (0, 3)),
                           (192, (7, 1), None, (3, 0)), (192, 3, 2)),
                   _branch(c, "max"))


def _split_1x3_3x1(c):
    return _concat(_branch(c, None, (384, (1, 3), None, (0, 1))),
                   _branch(c, None, (384, (3, 1), None, (1, 0))))


def _then(first, second):
    """(A Sequential of two (block, channels) pairs, the second's channels)."""
    out = nn.HybridSequential()
    out.add(first[0], second[0])
    return out, second[1]


def _mixed_e(c):
    return _concat(_branch(c, None, (320, 1)),
                   _then(_branch(c, None, (384, 1)), _split_1x3_3x1(384)),
                   _then(_branch(c, None, (448, 1), (384, 3, None, 1)), _split_1x3_3x1(384)),
                   _branch(c, "avg", (192, 1)))


class Inception3(nn.HybridBlock):
    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        self.features.add(_basic_conv(0, 32, 3, 2), _basic_conv(32, 32, 3),
                          _basic_conv(32, 64, 3, None, 1), nn.MaxPool2D(pool_size=3, strides=2),
                          _basic_conv(64, 80, 1), _basic_conv(80, 192, 3),
                          nn.MaxPool2D(pool_size=3, strides=2))
        c = 192
        for make, arg in ((_mixed_a, 32), (_mixed_a, 64), (_mixed_a, 64), (_mixed_b, None),
                          (_mixed_c, 128), (_mixed_c, 160), (_mixed_c, 160), (_mixed_c, 192),
                          (_mixed_d, None), (_mixed_e, None), (_mixed_e, None)):
            block, c = make(c) if arg is None else make(c, arg)
            self.features.add(block)
        self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=None, root=None, **kwargs):
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, "inceptionv3", ctx, root)
    return net
