"""DenseNet (Huang et al. 2016) 121, 161, 169 and 201 with MXNet 1.9's structure:
``features`` (the stem, dense stages of layers that each append ``growth_rate`` channels,
transitions that halve the channels and the size) and ``output``. A dense layer is a
Concurrent of the identity and the new features, joined on the channel axis."""
from ... import nn
from ..model_store import load_pretrained


def _dense_layer(in_channels, growth_rate, bn_size, dropout):
    mid = bn_size * growth_rate
    new_features = nn.HybridSequential()
    new_features.add(nn.BatchNorm(in_channels=in_channels), nn.Activation("relu"),
                     nn.Conv2D(mid, kernel_size=1, use_bias=False, in_channels=in_channels),
                     nn.BatchNorm(in_channels=mid), nn.Activation("relu"),
                     nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False,
                               in_channels=mid))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    layer = nn.HybridConcurrent(axis=1)
    layer.add(nn.Identity(), new_features)
    return layer


def _dense_stage(in_channels, num_layers, bn_size, growth_rate, dropout):
    stage = nn.HybridSequential()
    for i in range(num_layers):
        stage.add(_dense_layer(in_channels + i * growth_rate, growth_rate, bn_size, dropout))
    return stage


def _transition(in_channels, channels):
    out = nn.HybridSequential()
    out.add(nn.BatchNorm(in_channels=in_channels), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=1, use_bias=False, in_channels=in_channels),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(nn.HybridBlock):
    """``block_config[i]`` dense layers in stage i; the stem has ``num_init_features``
    channels. Its final 7x7 average pooling needs 224x224 inputs (or larger)."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                    use_bias=False), nn.BatchNorm(in_channels=num_init_features),
                          nn.Activation("relu"), nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        channels = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add(_dense_stage(channels, num_layers, bn_size, growth_rate, dropout))
            channels += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add(_transition(channels, channels // 2))
                channels //= 2
        self.features.add(nn.BatchNorm(in_channels=channels), nn.Activation("relu"),
                          nn.AvgPool2D(pool_size=7), nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


# layers: (stem channels, growth rate, dense layers per stage)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """DenseNet of ``num_layers`` (121, 161, 169, 201) layers; kwargs: classes, bn_size,
    dropout."""
    if num_layers not in densenet_spec:
        raise ValueError(f"get_densenet: {num_layers} layers is not one of "
                         f"{sorted(densenet_spec)}")
    net = DenseNet(*densenet_spec[num_layers], **kwargs)
    if pretrained:
        load_pretrained(net, f"densenet{num_layers}", ctx, root)
    return net


def densenet121(**kwargs):
    return get_densenet(121, **kwargs)


def densenet161(**kwargs):
    return get_densenet(161, **kwargs)


def densenet169(**kwargs):
    return get_densenet(169, **kwargs)


def densenet201(**kwargs):
    return get_densenet(201, **kwargs)
