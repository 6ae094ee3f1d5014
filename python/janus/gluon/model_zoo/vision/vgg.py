"""VGG (Simonyan and Zisserman 2014) with 11, 13, 16 or 19 layers, with or without batch norm,
with MXNet 1.9's structure: ``features`` (the 3x3 convolutions, each stage ending in a 2x2 max
pooling, then two Dense(4096) with dropout) and ``output``."""
from ... import nn
from .... import initializer as _init
from ..model_store import load_pretrained


class VGG(nn.HybridBlock):
    """``layers[i]`` convolutions of ``filters[i]`` channels in stage i."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError(f"VGG: {len(layers)} stages but {len(filters)} filter counts")
        self.features = nn.HybridSequential()
        in_channels = 0  # the image's: inferred
        for num, channels in zip(layers, filters):
            for _ in range(num):
                self.features.add(nn.Conv2D(
                    channels, kernel_size=3, padding=1,
                    weight_initializer=_init.Xavier(rnd_type="gaussian", factor_type="out",
                                                    magnitude=2),
                    bias_initializer="zeros", in_channels=in_channels))
                if batch_norm:
                    self.features.add(nn.BatchNorm(in_channels=channels))
                self.features.add(nn.Activation("relu"))
                in_channels = channels
            self.features.add(nn.MaxPool2D(strides=2))
        for in_units in (0, 4096):  # the first's depends on the image's size
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros", in_units=in_units),
                              nn.Dropout(rate=0.5))
        self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros",
                               in_units=4096)

    def forward(self, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """VGG of ``num_layers`` (11, 13, 16, 19) layers; kwargs: classes, batch_norm."""
    if num_layers not in vgg_spec:
        raise ValueError(f"get_vgg: {num_layers} layers is not one of {sorted(vgg_spec)}")
    net = VGG(*vgg_spec[num_layers], **kwargs)
    if pretrained:
        suffix = "_bn" if kwargs.get("batch_norm") else ""
        load_pretrained(net, f"vgg{num_layers}{suffix}", ctx, root)
    return net


def vgg11(**kwargs):
    return get_vgg(11, **kwargs)


def vgg13(**kwargs):
    return get_vgg(13, **kwargs)


def vgg16(**kwargs):
    return get_vgg(16, **kwargs)


def vgg19(**kwargs):
    return get_vgg(19, **kwargs)


def vgg11_bn(**kwargs):
    return get_vgg(11, batch_norm=True, **kwargs)


def vgg13_bn(**kwargs):
    return get_vgg(13, batch_norm=True, **kwargs)


def vgg16_bn(**kwargs):
    return get_vgg(16, batch_norm=True, **kwargs)


def vgg19_bn(**kwargs):
    return get_vgg(19, batch_norm=True, **kwargs)
