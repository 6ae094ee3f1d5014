"""``gluon.model_zoo.vision``: MXNet 1.9's image classifiers by name (``get_model``) or by
constructor. Each is a HybridBlock built from Janus's layers with MXNet's structure, so that
its parameters have MXNet's structural names and shapes and MXNet's ``save_parameters`` files
load into it. ``pretrained=True`` loads ``root/NAME-*.params`` (see model_store: nothing is
downloaded).

The layers inside a model are given their input channels (which MXNet mostly infers at the
first forward), so that their parameters' shapes are known once the model is built; those of
the first layer, which depend on the image's channels, and of a Dense after a Flatten, which
depend on the image's size, are inferred at the first forward as in MXNet."""
from .alexnet import AlexNet, alexnet  # noqa: F401
from .densenet import (DenseNet, densenet121, densenet161, densenet169,  # noqa: F401
                       densenet201, get_densenet)
from .inception import Inception3, inception_v3  # noqa: F401
from .mobilenet import (MobileNet, MobileNetV2, get_mobilenet, get_mobilenet_v2,  # noqa: F401
                        mobilenet0_25, mobilenet0_5, mobilenet0_75, mobilenet1_0,
                        mobilenet_v2_0_25, mobilenet_v2_0_5, mobilenet_v2_0_75,
                        mobilenet_v2_1_0)
from .resnet import (BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2,  # noqa: F401
                     ResNetV1, ResNetV2, get_resnet, resnet18_v1, resnet18_v2, resnet34_v1,
                     resnet34_v2, resnet50_v1, resnet50_v2, resnet101_v1, resnet101_v2,
                     resnet152_v1, resnet152_v2)
from .squeezenet import SqueezeNet, get_squeezenet, squeezenet1_0, squeezenet1_1  # noqa: F401
from .vgg import (VGG, get_vgg, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn,  # noqa: F401
                  vgg19, vgg19_bn)

_models = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161, "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75, "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """The model ``name`` (case-insensitive; see ``_models``); kwargs: pretrained (False),
    classes (1000), ctx (where pretrained parameters go), root (the folder of pretrained
    files), and the model's own (thumbnail, batch_norm, ...)."""
    key = name.lower()
    if key not in _models:
        raise ValueError(f"get_model: no model '{name}'; the models are: "
                         f"{', '.join(sorted(_models))}")
    return _models[key](**kwargs)
