"""ResNet v1 (He et al. 2015: the residual added after the block's last batch norm, then ReLU)
and v2 (He et al. 2016: batch norm and ReLU before each convolution), 18 to 152 layers, with
MXNet 1.9's structure: ``features`` (a Sequential whose stages are Sequentials of blocks) and
``output`` (Dense); blocks hold ``body`` and ``downsample`` (v1) or ``bn1``, ``conv1``, ...
(v2)."""
from .... import _janus
from ... import nn
from ..model_store import load_pretrained


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _downsample_v1(channels, stride, in_channels):
    seq = nn.HybridSequential()
    seq.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels), nn.BatchNorm(in_channels=channels))
    return seq


class BasicBlockV1(nn.HybridBlock):
    """Two 3x3 convolutions (the first with ``stride``), each followed by batch norm."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential()
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(in_channels=channels),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels),
                      nn.BatchNorm(in_channels=channels))
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return _janus.relu(self.body(x) + residual)


class BottleneckV1(nn.HybridBlock):
    """1x1 (with ``stride``) to channels/4, 3x3, 1x1 back to ``channels``, each followed by
    batch norm."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential()
        mid = channels // 4
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride, in_channels=in_channels),
                      nn.BatchNorm(in_channels=mid), nn.Activation("relu"),
                      _conv3x3(mid, 1, mid), nn.BatchNorm(in_channels=mid), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1, in_channels=mid),
                      nn.BatchNorm(in_channels=channels))
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        return _janus.relu(self.body(x) + residual)


class BasicBlockV2(nn.HybridBlock):
    """Pre-activation: batch norm and ReLU, then each of two 3x3 convolutions; the shortcut
    (a strided 1x1 convolution when ``downsample``) starts after the first ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm(in_channels=in_channels)
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm(in_channels=channels)
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None

    def forward(self, x):
        residual = x
        x = _janus.relu(self.bn1(x))
        if self.downsample is not None:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(_janus.relu(self.bn2(x)))
        return x + residual


class BottleneckV2(nn.HybridBlock):
    """Pre-activation bottleneck: 1x1 to channels/4, 3x3 (with ``stride``), 1x1 back, each
    after batch norm and ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm(in_channels=in_channels)
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False,
                               in_channels=in_channels)
        self.bn2 = nn.BatchNorm(in_channels=mid)
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm(in_channels=mid)
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False,
                               in_channels=mid)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None

    def forward(self, x):
        residual = x
        x = _janus.relu(self.bn1(x))
        if self.downsample is not None:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(_janus.relu(self.bn2(x)))
        x = self.conv3(_janus.relu(self.bn3(x)))
        return x + residual


def _stage(block, num_blocks, channels, stride, in_channels):
    stage = nn.HybridSequential()
    stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels))
    for _ in range(num_blocks - 1):
        stage.add(block(channels, 1, False, in_channels=channels))
    return stage


def _stem(features, channels, thumbnail):
    if thumbnail:  # small images (CIFAR): one 3x3 convolution, no pooling
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False),
                     nn.BatchNorm(in_channels=channels),
                     nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))


class ResNetV1(nn.HybridBlock):
    """``layers[i]`` blocks of ``channels[i + 1]`` channels in stage i (``channels[0]``: the
    stem's), global average pooling, then ``output``."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError(f"ResNetV1: {len(layers)} stages need {len(layers) + 1} channel "
                             f"counts, got {len(channels)}")
        self.features = nn.HybridSequential()
        _stem(self.features, channels[0], thumbnail)
        for i, num_blocks in enumerate(layers):
            self.features.add(_stage(block, num_blocks, channels[i + 1], 1 if i == 0 else 2,
                                     channels[i]))
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV2(nn.HybridBlock):
    """As ResNetV1 with pre-activation blocks; the input is first normalised by a batch norm
    without scale or shift, and the features end with batch norm and ReLU."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError(f"ResNetV2: {len(layers)} stages need {len(layers) + 1} channel "
                             f"counts, got {len(channels)}")
        self.features = nn.HybridSequential()
        self.features.add(nn.BatchNorm(scale=False, center=False))
        _stem(self.features, channels[0], thumbnail)
        in_channels = channels[0]
        for i, num_blocks in enumerate(layers):
            self.features.add(_stage(block, num_blocks, channels[i + 1], 1 if i == 0 else 2,
                                     in_channels))
            in_channels = channels[i + 1]
        self.features.add(nn.BatchNorm(in_channels=in_channels), nn.Activation("relu"),
                          nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes, in_units=in_channels)

    def forward(self, x):
        return self.output(self.features(x))


# layers: (block kind, blocks per stage, channels of the stem and of each stage)
resnet_spec = {18: ("basic", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottleneck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottleneck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottleneck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
_nets = {1: ResNetV1, 2: ResNetV2}
_blocks = {1: {"basic": BasicBlockV1, "bottleneck": BottleneckV1},
           2: {"basic": BasicBlockV2, "bottleneck": BottleneckV2}}


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet ``version`` (1 or 2) of ``num_layers`` (18, 34, 50, 101, 152) layers; kwargs:
    classes, thumbnail."""
    if num_layers not in resnet_spec:
        raise ValueError(f"get_resnet: {num_layers} layers is not one of "
                         f"{sorted(resnet_spec)}")
    if version not in _nets:
        raise ValueError(f"get_resnet: version {version} is not 1 or 2")
    kind, layers, channels = resnet_spec[num_layers]
    net = _nets[version](_blocks[version][kind], layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, f"resnet{num_layers}_v{version}", ctx, root)
    return net


def resnet18_v1(**kwargs):
    return get_resnet(1, 18, **kwargs)


def resnet34_v1(**kwargs):
    return get_resnet(1, 34, **kwargs)


def resnet50_v1(**kwargs):
    return get_resnet(1, 50, **kwargs)


def resnet101_v1(**kwargs):
    return get_resnet(1, 101, **kwargs)


def resnet152_v1(**kwargs):
    return get_resnet(1, 152, **kwargs)


def resnet18_v2(**kwargs):
    return get_resnet(2, 18, **kwargs)


def resnet34_v2(**kwargs):
    return get_resnet(2, 34, **kwargs)


def resnet50_v2(**kwargs):
    return get_resnet(2, 50, **kwargs)


def resnet101_v2(**kwargs):
    return get_resnet(2, 101, **kwargs)


def resnet152_v2(**kwargs):
    return get_resnet(2, 152, **kwargs)
