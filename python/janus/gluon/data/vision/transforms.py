"""``transforms``: ToTensor (the identity on Janus's datasets, which are already float32
[C, H, W] in [0, 1]) and Compose."""


class ToTensor:
    def __call__(self, x):
        return x


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


def _is_to_tensor(fn):
    if isinstance(fn, ToTensor):
        return True
    return isinstance(fn, Compose) and all(_is_to_tensor(t) for t in fn.transforms)
