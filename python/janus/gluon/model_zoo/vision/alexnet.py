"""AlexNet (Krizhevsky 2014's single-tower variant) with MXNet 1.9's structure: ``features``
(five convolutions, three max poolings, two Dense(4096) with dropout) and ``output``."""
from ... import nn
from ..model_store import load_pretrained


class AlexNet(nn.HybridBlock):
    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        self.features.add(
            nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(192, kernel_size=5, padding=2, activation="relu", in_channels=64),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Conv2D(384, kernel_size=3, padding=1, activation="relu", in_channels=192),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu", in_channels=384),
            nn.Conv2D(256, kernel_size=3, padding=1, activation="relu", in_channels=256),
            nn.MaxPool2D(pool_size=3, strides=2),
            nn.Flatten(),
            nn.Dense(4096, activation="relu"), nn.Dropout(0.5),
            nn.Dense(4096, activation="relu", in_units=4096), nn.Dropout(0.5))
        self.output = nn.Dense(classes, in_units=4096)

    def forward(self, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=None, root=None, **kwargs):
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, "alexnet", ctx, root)
    return net
