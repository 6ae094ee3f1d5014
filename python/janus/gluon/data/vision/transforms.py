"""``transforms``: MXNet 1.9's image transforms, applied to one sample at a time (an image
[H, W, C], or a batch [N, H, W, C], uint8 or float, before ToTensor; [C, H, W] float after it).
Each is a callable; ``Compose`` chains them; ``dataset.transform_first(t)`` applies one to the
first element of each sample. They compute in NumPy on the sample and return a Janus array.
Randomness comes from Janus's generator (``mx.random.seed`` makes it repeatable).

Resizing is bilinear with half-pixel centres (OpenCV's INTER_LINEAR for enlarging; no
antialiasing when shrinking, as OpenCV); uint8 results are rounded, so a pixel can differ by 1
from OpenCV's fixed-point arithmetic."""
import math as _math
import numbers as _numbers

import numpy as _onp

from .... import _janus


def _to_numpy(x):
    return x if isinstance(x, _onp.ndarray) else x.asnumpy()


def _to_janus(a):
    from .... import numpy as np
    return np.array(_onp.ascontiguousarray(a))


def _uniform(low, high):
    return float(_janus.random_uniform(float(low), float(high), (1,)).item())


def _check_image(name, a):
    if a.ndim not in (3, 4):
        raise ValueError(f"{name}: expected an image [H, W, C] or a batch [N, H, W, C], got "
                         f"shape {a.shape}")


def _size_pair(name, size):
    """(W, H) from an int or a (W, H) pair."""
    pair = (size, size) if isinstance(size, _numbers.Integral) else tuple(size)
    if len(pair) != 2 or not all(isinstance(s, _numbers.Integral) and s > 0 for s in pair):
        raise ValueError(f"{name}: size {size!r} is not a positive int or a (width, height) pair")
    return int(pair[0]), int(pair[1])


def _resize(a, w, h):
    """a [..., H, W, C] resized bilinearly to [..., h, w, C], in a's dtype."""
    in_h, in_w = a.shape[-3], a.shape[-2]
    if (in_h, in_w) == (h, w):
        return a

    def coords(n_out, n_in):
        src = (_onp.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        src = _onp.clip(src, 0, n_in - 1)
        lo = _onp.floor(src).astype(_onp.int64)
        hi = _onp.minimum(lo + 1, n_in - 1)
        return lo, hi, (src - lo).astype(_onp.float32)

    y0, y1, fy = coords(h, in_h)
    x0, x1, fx = coords(w, in_w)
    f = a.astype(_onp.float32)
    top = f[..., y0, :, :] * (1 - fy)[:, None, None] + f[..., y1, :, :] * fy[:, None, None]
    out = top[..., :, x0, :] * (1 - fx)[:, None] + top[..., :, x1, :] * fx[:, None]
    if a.dtype == _onp.uint8:
        return _onp.clip(_onp.rint(out), 0, 255).astype(_onp.uint8)
    return out.astype(a.dtype)


def _crop(a, x0, y0, w, h):
    return a[..., y0:y0 + h, x0:x0 + w, :]


def _center_crop(a, w, h):
    in_h, in_w = a.shape[-3], a.shape[-2]
    if in_w < w or in_h < h:  # too small: the largest centred region of w:h's shape, enlarged
        scale = min(in_w / w, in_h / h)
        cw, ch = max(1, int(w * scale)), max(1, int(h * scale))
    else:
        cw, ch = w, h
    x0, y0 = (in_w - cw) // 2, (in_h - ch) // 2
    return _resize(_crop(a, x0, y0, cw, ch), w, h)


class Compose:
    """The transforms one after the other."""

    def __init__(self, transforms):
        self.transforms = list(transforms)
        for t in self.transforms:
            if not callable(t):
                raise TypeError(f"Compose: {t!r} is not callable")

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def __repr__(self):
        return "Compose(" + ", ".join(repr(t) for t in self.transforms) + ")"


class Cast:
    """The array in ``dtype``."""

    def __init__(self, dtype="float32"):
        self._dtype = _onp.dtype(dtype)

    def __call__(self, x):
        return _to_janus(_to_numpy(x).astype(self._dtype))


class ToTensor:
    """[H, W, C] (or [N, H, W, C]) in [0, 255] to float32 [C, H, W] (or [N, C, H, W]) in
    [0, 1]."""

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image("ToTensor", a)
        return _to_janus(_onp.moveaxis(a.astype(_onp.float32) / 255.0, -1, -3))

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """(x - mean[c]) / std[c] for a tensor [C, H, W] or [N, C, H, W]; mean and std are numbers
    or one per channel."""

    def __init__(self, mean=0.0, std=1.0):
        self._mean = _onp.asarray(mean, _onp.float32).reshape(-1)
        self._std = _onp.asarray(std, _onp.float32).reshape(-1)
        if (self._std == 0).any():
            raise ValueError(f"Normalize: std {std!r} has a zero")

    def __call__(self, x):
        a = _to_numpy(x)
        if a.ndim not in (3, 4):
            raise ValueError(f"Normalize: expected a tensor [C, H, W] or [N, C, H, W], got "
                             f"shape {a.shape}")
        c = a.shape[-3]
        for name, v in (("mean", self._mean), ("std", self._std)):
            if v.size not in (1, c):
                raise ValueError(f"Normalize: {v.size} values of {name} for {c} channels")
        shape = (-1, 1, 1)
        return _to_janus((a - self._mean.reshape(shape)) / self._std.reshape(shape))


class Resize:
    """The image resized to ``size`` (an int: size x size, or with ``keep_ratio`` the shorter
    side to size; or (W, H))."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        if interpolation not in (0, 1):
            raise NotImplementedError(f"Resize: interpolation {interpolation} is not supported "
                                      "(1, bilinear, is)")
        _size_pair("Resize", size)
        self._size, self._keep = size, bool(keep_ratio)

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image("Resize", a)
        h, w = a.shape[-3], a.shape[-2]
        if isinstance(self._size, _numbers.Integral) and self._keep:
            s = int(self._size)
            nw, nh = (s, int(h * s / w)) if w <= h else (int(w * s / h), s)
        else:
            nw, nh = _size_pair("Resize", self._size)
        return _to_janus(_resize(a, nw, nh))


class CenterCrop:
    """The centred region of ``size`` (int or (W, H)); an image smaller than that is cropped
    to size's aspect ratio and enlarged."""

    def __init__(self, size, interpolation=1):
        self._w, self._h = _size_pair("CenterCrop", size)

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image("CenterCrop", a)
        return _to_janus(_center_crop(a, self._w, self._h))


class RandomResizedCrop:
    """A random region of ``scale`` times the area and aspect ratio in ``ratio`` (log-uniform),
    resized to ``size``; after 10 misses, the centre crop."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        self._w, self._h = _size_pair("RandomResizedCrop", size)
        if not 0 < scale[0] <= scale[1] <= 1:
            raise ValueError(f"RandomResizedCrop: scale {scale!r} is not 0 < min <= max <= 1")
        if not 0 < ratio[0] <= ratio[1]:
            raise ValueError(f"RandomResizedCrop: ratio {ratio!r} is not 0 < min <= max")
        self._scale, self._ratio = scale, ratio

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image("RandomResizedCrop", a)
        h, w = a.shape[-3], a.shape[-2]
        for _ in range(10):
            area = _uniform(*self._scale) * h * w
            r = _math.exp(_uniform(_math.log(self._ratio[0]), _math.log(self._ratio[1])))
            cw, ch = int(round(_math.sqrt(area * r))), int(round(_math.sqrt(area / r)))
            if 0 < cw <= w and 0 < ch <= h:
                x0 = min(int(_uniform(0, w - cw + 1)), w - cw)
                y0 = min(int(_uniform(0, h - ch + 1)), h - ch)
                return _to_janus(_resize(_crop(a, x0, y0, cw, ch), self._w, self._h))
        return _to_janus(_center_crop(a, self._w, self._h))


class _RandomFlip:
    _axis = None

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image(type(self).__name__, a)
        return _to_janus(_onp.flip(a, self._axis) if _uniform(0, 1) < 0.5 else a)


class RandomFlipLeftRight(_RandomFlip):
    """The image mirrored left to right with probability 0.5."""
    _axis = -2


class RandomFlipTopBottom(_RandomFlip):
    """The image upside down with probability 0.5."""
    _axis = -3


_GRAY = _onp.array([0.299, 0.587, 0.114], _onp.float32)


class _RandomBlend:
    """x * alpha + other(x) * (1 - alpha), alpha uniform in [1 - amount, 1 + amount]; uint8
    images are clipped to [0, 255] and rounded."""

    def __init__(self, amount):
        if amount < 0:
            raise ValueError(f"{type(self).__name__}: {amount} is negative")
        self._amount = float(amount)

    def __call__(self, x):
        a = _to_numpy(x)
        _check_image(type(self).__name__, a)
        alpha = _uniform(1 - self._amount, 1 + self._amount)
        f = a.astype(_onp.float32)
        out = f * alpha + self._other(f) * (1 - alpha)
        if a.dtype == _onp.uint8:
            out = _onp.clip(_onp.rint(out), 0, 255)
        return _to_janus(out.astype(a.dtype))

    def _other(self, f):
        if f.shape[-1] != 3:
            raise ValueError(f"{type(self).__name__}: expected 3 (RGB) channels last, got shape "
                             f"{f.shape}")
        return (f * _GRAY).sum(-1, keepdims=True)


class RandomBrightness(_RandomBlend):
    """The image times alpha in [1 - brightness, 1 + brightness]."""

    def _other(self, f):
        return _onp.zeros_like(f)


class RandomContrast(_RandomBlend):
    """The image blended with its mean grey level."""

    def _other(self, f):
        return _onp.broadcast_to(super()._other(f).mean(axis=(-3, -2), keepdims=True), f.shape)


class RandomSaturation(_RandomBlend):
    """The image blended with its grey version."""


def _is_to_tensor(fn):
    if isinstance(fn, ToTensor):
        return True
    return isinstance(fn, Compose) and all(_is_to_tensor(t) for t in fn.transforms)
