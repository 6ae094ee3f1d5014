"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016) with MXNet 1.9's structure: ``features`` (a
stem and fire modules: a 1x1 squeeze, then 1x1 and 3x3 expansions joined on the channel axis)
and ``output`` (a 1x1 convolution to the classes, ReLU, 13x13 average pooling: it needs
224x224 inputs)."""
from ... import nn
from ..model_store import load_pretrained


def _fire_conv(in_channels, channels, kernel_size, padding=0):
    out = nn.HybridSequential()
    out.add(nn.Conv2D(channels, kernel_size, padding=padding, in_channels=in_channels),
            nn.Activation("relu"))
    return out


def _fire(in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module on ``in_channels``; it gives expand1x1 + expand3x3 channels."""
    out = nn.HybridSequential()
    out.add(_fire_conv(in_channels, squeeze_channels, 1))
    paths = nn.HybridConcurrent(axis=1)
    paths.add(_fire_conv(squeeze_channels, expand1x1_channels, 1),
              _fire_conv(squeeze_channels, expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(nn.HybridBlock):
    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in ("1.0", "1.1"):
            raise ValueError(f"SqueezeNet: version '{version}' is not '1.0' or '1.1'")
        f = self.features = nn.HybridSequential()
        if version == "1.0":
            f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool(),
                  _fire(96, 16, 64, 64), _fire(128, 16, 64, 64), _fire(128, 32, 128, 128),
                  _pool(), _fire(256, 32, 128, 128), _fire(256, 48, 192, 192),
                  _fire(384, 48, 192, 192), _fire(384, 64, 256, 256), _pool(),
                  _fire(512, 64, 256, 256))
        else:
            f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool(),
                  _fire(64, 16, 64, 64), _fire(128, 16, 64, 64), _pool(),
                  _fire(128, 32, 128, 128), _fire(256, 32, 128, 128), _pool(),
                  _fire(256, 48, 192, 192), _fire(384, 48, 192, 192), _fire(384, 64, 256, 256),
                  _fire(512, 64, 256, 256))
        f.add(nn.Dropout(0.5))
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, kernel_size=1, in_channels=512), nn.Activation("relu"),
                        nn.AvgPool2D(13), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=None, root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); kwargs: classes."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f"squeezenet{version}", ctx, root)
    return net


def squeezenet1_0(**kwargs):
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    return get_squeezenet("1.1", **kwargs)
