"""MobileNet (Howard et al. 2017) and MobileNetV2 (Sandler et al. 2018) at width multipliers
1.0, 0.75, 0.5 and 0.25, with MXNet 1.9's structure: ``features`` (convolution, batch norm,
ReLU or ReLU6 triples; V2's inverted residual blocks hold theirs in ``out``) and ``output``
(V1: Dense; V2: a 1x1 convolution without bias to the classes, then Flatten)."""
from .... import _janus
from ... import nn
from ..model_store import load_pretrained


class RELU6(nn.HybridBlock):
    """min(max(x, 0), 6)."""

    def forward(self, x):
        return _janus.clip(x, 0.0, 6.0)


def _add_conv(out, in_channels, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False,
                      in_channels=in_channels),
            nn.BatchNorm(scale=True, in_channels=channels))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 convolution then a pointwise one."""
    _add_conv(out, dw_channels, dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, dw_channels, channels, relu6=relu6)


class LinearBottleneck(nn.HybridBlock):
    """V2's inverted residual: 1x1 expansion by ``t``, depthwise 3x3 (with ``stride``), linear
    1x1 projection to ``channels``; the input is added when the shapes agree."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        self.out = nn.HybridSequential()
        mid = in_channels * t
        _add_conv(self.out, in_channels, mid, relu6=True)
        _add_conv(self.out, mid, mid, kernel=3, stride=stride, pad=1, num_group=mid, relu6=True)
        _add_conv(self.out, mid, channels, active=False, relu6=True)

    def forward(self, x):
        out = self.out(x)
        return out + x if self.use_shortcut else out


class MobileNet(nn.HybridBlock):
    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        _add_conv(self.features, 0, int(32 * multiplier), kernel=3, pad=1, stride=2)
        dw_channels = [int(c * multiplier) for c in [32, 64] + [128] * 2 + [256] * 2
                       + [512] * 6 + [1024]]
        channels = [int(c * multiplier) for c in [64] + [128] * 2 + [256] * 2 + [512] * 6
                    + [1024] * 2]
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        for dwc, c, s in zip(dw_channels, channels, strides):
            _add_conv_dw(self.features, dwc, c, s)
        self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class MobileNetV2(nn.HybridBlock):
    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        _add_conv(self.features, 0, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
        in_channels = [int(c * multiplier) for c in [32] + [16] + [24] * 2 + [32] * 3
                       + [64] * 4 + [96] * 3 + [160] * 3]
        channels = [int(c * multiplier) for c in [16] + [24] * 2 + [32] * 3 + [64] * 4
                    + [96] * 3 + [160] * 3 + [320]]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for in_c, c, t, s in zip(in_channels, channels, ts, strides):
            self.features.add(LinearBottleneck(in_c, c, t, s))
        last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
        _add_conv(self.features, channels[-1], last_channels, relu6=True)
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, 1, use_bias=False, in_channels=last_channels),
                        nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def _suffix(multiplier):
    """MXNet's file-name suffix: 1.0, 0.75, 0.5, 0.25."""
    s = f"{multiplier:.2f}"
    return s[:-1] if s in ("1.00", "0.50") else s


def get_mobilenet(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNet of width ``multiplier``; kwargs: classes."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f"mobilenet{_suffix(multiplier)}", ctx, root)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=None, root=None, **kwargs):
    """MobileNetV2 of width ``multiplier``; kwargs: classes."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, f"mobilenetv2_{_suffix(multiplier)}", ctx, root)
    return net


def mobilenet1_0(**kwargs):
    return get_mobilenet(1.0, **kwargs)


def mobilenet0_75(**kwargs):
    return get_mobilenet(0.75, **kwargs)


def mobilenet0_5(**kwargs):
    return get_mobilenet(0.5, **kwargs)


def mobilenet0_25(**kwargs):
    return get_mobilenet(0.25, **kwargs)


def mobilenet_v2_1_0(**kwargs):
    return get_mobilenet_v2(1.0, **kwargs)


def mobilenet_v2_0_75(**kwargs):
    return get_mobilenet_v2(0.75, **kwargs)


def mobilenet_v2_0_5(**kwargs):
    return get_mobilenet_v2(0.5, **kwargs)


def mobilenet_v2_0_25(**kwargs):
    return get_mobilenet_v2(0.25, **kwargs)
