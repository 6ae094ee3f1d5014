"""``transforms``: MXNet 1.9's image transforms, applied to one sample at a time (an image
[H, W, C], or a batch [N, H, W, C], uint8 or float, before ToTensor; [C, H, W] float after it).
Each is a ``gluon.HybridBlock`` (as in MXNet: ``isinstance(t, gluon.Block)``), called on a Janus
or NumPy array; ``Compose`` chains them; ``dataset.transform_first(t)`` applies one to the
first element of each sample. ToTensor, Normalize and Cast compute with Janus operators, so
``hybridize()`` compiles them; the others compute in NumPy on the sample and return a Janus
array, and their ``hybridize()`` leaves them imperative (a NumPy computation cannot be traced).
Randomness comes from Janus's generator (``mx.random.seed`` makes it repeatable).

Resizing is bilinear with half-pixel centres (OpenCV's INTER_LINEAR for enlarging; no
antialiasing when shrinking, as OpenCV); uint8 results are rounded, so a pixel can differ by 1
from OpenCV's fixed-point arithmetic."""
import math as _math
import numbers as _numbers

import numpy as _onp

from .... import _janus
from ... import nn as _nn


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


class _Transform(_nn.HybridBlock):
    """A transform: a Block whose forward computes ``_apply(x)`` in NumPy (and so is not
    traced: ``hybridize()`` keeps it imperative). Subclasses computing with Janus operators
    set ``_traceable`` and hybridize for real."""

    _traceable = False

    def __init__(self):
        super().__init__()

    def __call__(self, x):
        if isinstance(x, _onp.ndarray):
            x = _to_janus(x)
        return _nn.Block.__call__(self, x)

    def forward(self, x):
        return self._apply(x)

    def hybridize(self, active=True, **kwargs):
        if self._traceable:
            _nn.Block.hybridize(self, active, **kwargs)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Compose(_Transform):
    """The transforms one after the other; ``hybridize()`` hybridizes each of them (those that
    compute with Janus operators compile, the NumPy ones stay imperative)."""

    def __init__(self, transforms):
        super().__init__()
        self.transforms = list(transforms)
        for t in self.transforms:
            if not callable(t):
                raise TypeError(f"Compose: {t!r} is not callable")

    def forward(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def hybridize(self, active=True, **kwargs):
        for t in self.transforms:
            if isinstance(t, _nn.Block):
                t.hybridize(active, **kwargs)

    def __repr__(self):
        return "Compose(" + ", ".join(repr(t) for t in self.transforms) + ")"


class Cast(_Transform):
    """The array in ``dtype``."""

    _traceable = True

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = _onp.dtype(dtype)

    def forward(self, x):
        return x.astype(self._dtype.name)

    def __repr__(self):
        return f"Cast({self._dtype.name})"


class ToTensor(_Transform):
    """[H, W, C] (or [N, H, W, C]) in [0, 255] to float32 [C, H, W] (or [N, C, H, W]) in
    [0, 1]."""

    _traceable = True

    def forward(self, x):
        _check_image("ToTensor", x)
        axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
        return (x.astype("float32") / 255.0).transpose(axes)


class Normalize(_Transform):
    """(x - mean[c]) / std[c] for a tensor [C, H, W] or [N, C, H, W]; mean and std are numbers
    or one per channel."""

    _traceable = True

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = _onp.asarray(mean, _onp.float32).reshape(-1)
        self._std = _onp.asarray(std, _onp.float32).reshape(-1)
        if (self._std == 0).any():
            raise ValueError(f"Normalize: std {std!r} has a zero")

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Normalize: expected a tensor [C, H, W] or [N, C, H, W], got "
                             f"shape {x.shape}")
        c = x.shape[-3]
        for name, v in (("mean", self._mean), ("std", self._std)):
            if v.size not in (1, c):
                raise ValueError(f"Normalize: {v.size} values of {name} for {c} channels")
        from .... import numpy as np
        mean = np.array(self._mean.reshape(-1, 1, 1), ctx=x.ctx)
        std = np.array(self._std.reshape(-1, 1, 1), ctx=x.ctx)
        return (x - mean) / std

    def __repr__(self):
        return f"Normalize(mean={self._mean.tolist()}, std={self._std.tolist()})"


class Resize(_Transform):
    """The image resized to ``size`` (an int: size x size, or with ``keep_ratio`` the shorter
    side to size; or (W, H))."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        if interpolation not in (0, 1):
            raise NotImplementedError(f"Resize: interpolation {interpolation} is not supported "
                                      "(1, bilinear, is)")
        _size_pair("Resize", size)
        self._size, self._keep = size, bool(keep_ratio)

    def _apply(self, x):
        a = _to_numpy(x)
        _check_image("Resize", a)
        h, w = a.shape[-3], a.shape[-2]
        if isinstance(self._size, _numbers.Integral) and self._keep:
            s = int(self._size)
            nw, nh = (s, int(h * s / w)) if w <= h else (int(w * s / h), s)
        else:
            nw, nh = _size_pair("Resize", self._size)
        return _to_janus(_resize(a, nw, nh))


class CenterCrop(_Transform):
    """The centred region of ``size`` (int or (W, H)); an image smaller than that is cropped
    to size's aspect ratio and enlarged."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._w, self._h = _size_pair("CenterCrop", size)

    def _apply(self, x):
        a = _to_numpy(x)
        _check_image("CenterCrop", a)
        return _to_janus(_center_crop(a, self._w, self._h))


class RandomResizedCrop(_Transform):
    """A random region of ``scale`` times the area and aspect ratio in ``ratio`` (log-uniform),
    resized to ``size``; after 10 misses, the centre crop."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._w, self._h = _size_pair("RandomResizedCrop", size)
        if not 0 < scale[0] <= scale[1] <= 1:
            raise ValueError(f"RandomResizedCrop: scale {scale!r} is not 0 < min <= max <= 1")
        if not 0 < ratio[0] <= ratio[1]:
            raise ValueError(f"RandomResizedCrop: ratio {ratio!r} is not 0 < min <= max")
        self._scale, self._ratio = scale, ratio

    def _apply(self, x):
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


class _RandomFlip(_Transform):
    _axis = None

    def _apply(self, x):
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


class _RandomBlend(_Transform):
    """x * alpha + other(x) * (1 - alpha), alpha uniform in [1 - amount, 1 + amount]; uint8
    images are clipped to [0, 255] and truncated (_in_dtype)."""

    def __init__(self, amount):
        super().__init__()
        if amount < 0:
            raise ValueError(f"{type(self).__name__}: {amount} is negative")
        self._amount = float(amount)

    def _apply(self, x):
        a = _to_numpy(x)
        _check_image(type(self).__name__, a)
        return _to_janus(_in_dtype(self._blend(a.astype(_onp.float32)), a))

    def _blend(self, f):
        alpha = _uniform(1 - self._amount, 1 + self._amount)
        return f * alpha + self._other(f) * (1 - alpha)

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


def _adjust_hue(f, alpha):
    """f float32 [..., 3] (RGB in [0, 255]) with its hue turned by alpha * 360 degrees through
    HLS, as MXNet's image.random_hue computes it (the lightness and saturation kept)."""
    x = f / 255.0
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    vmax, vmin = x.max(-1), x.min(-1)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chromatic = diff > _onp.finfo(_onp.float32).eps
    safe = _onp.where(chromatic, diff, 1)
    sat = _onp.where(light < 0.5, diff / _onp.where(chromatic, vmax + vmin, 1),
                     diff / _onp.where(chromatic, 2 - vmax - vmin, 1))
    sat = _onp.where(chromatic, sat, 0)
    scale = 60.0 / safe
    hue = _onp.where(vmax == r, (g - b) * scale,
                     _onp.where(vmax == g, (b - r) * scale + 120, (r - g) * scale + 240))
    hue = _onp.where(hue < 0, hue + 360, hue)
    hue = _onp.where(chromatic, hue, 0) + alpha * 360.0
    # Back to RGB: the sector of the hue picks, per channel, one of p2, p1 and two ramps.
    p2 = _onp.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    h = _onp.mod(hue * _onp.float32(1.0 / 60.0), _onp.float32(6.0))
    sector = _onp.minimum(h.astype(_onp.int64), 5)
    frac = h - sector
    tab = _onp.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac], -1)
    pick = _onp.array([[0, 3, 1], [2, 0, 1], [1, 0, 3], [1, 2, 0], [3, 1, 0], [0, 1, 2]])
    rgb = _onp.take_along_axis(tab, pick[sector], -1)
    rgb = _onp.where(sat[..., None] != 0, rgb, light[..., None])
    return (rgb * 255.0).astype(_onp.float32)


# AlexNet's PCA of ImageNet's RGB values: eigenvalue times eigenvector, per channel (row).
_LIGHTING_EIG = _onp.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                            [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                            [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], _onp.float32)


def _adjust_lighting(f, alpha):
    """f float32 [..., 3] plus the PCA noise of the channel weights ``alpha`` (R, G, B)."""
    return f + _LIGHTING_EIG @ _onp.asarray(alpha, _onp.float32)


def _in_dtype(out, like):
    """A float32 result back in the input's dtype: uint8 clipped to [0, 255] and truncated (as
    MXNet's saturate_cast), floats as they are."""
    if like.dtype == _onp.uint8:
        return _onp.clip(out, 0, 255).astype(_onp.uint8)
    return out.astype(like.dtype)


def _rgb_image(name, a):
    _check_image(name, a)
    if a.shape[-1] != 3:
        raise ValueError(f"{name}: expected 3 (RGB) channels last, got shape {a.shape}")


class RandomHue(_Transform):
    """The image's hue turned by alpha * 360 degrees, alpha uniform in [max(0, 1 - hue),
    1 + hue] (MXNet's range: a turn of alpha and of alpha - 1 are the same)."""

    def __init__(self, hue):
        super().__init__()
        if hue < 0:
            raise ValueError(f"RandomHue: hue {hue} is negative")
        self._low, self._high = max(0.0, 1.0 - hue), 1.0 + hue

    def _apply(self, x):
        a = _to_numpy(x)
        _rgb_image("RandomHue", a)
        alpha = _uniform(self._low, self._high)
        return _to_janus(_in_dtype(_adjust_hue(a.astype(_onp.float32), alpha), a))


class RandomLighting(_Transform):
    """AlexNet's PCA lighting noise: each channel plus the ImageNet RGB eigenvectors weighted
    by their eigenvalues and alpha ~ N(0, alpha) per eigenvector."""

    def __init__(self, alpha):
        super().__init__()
        if alpha < 0:
            raise ValueError(f"RandomLighting: alpha {alpha} is negative")
        self._std = float(alpha)

    def _apply(self, x):
        a = _to_numpy(x)
        _rgb_image("RandomLighting", a)
        w = _janus.random_normal(0.0, self._std, (3,)).asnumpy() if self._std > 0 else _onp.zeros(3)
        return _to_janus(_in_dtype(_adjust_lighting(a.astype(_onp.float32), w), a))


class RandomColorJitter(_Transform):
    """Brightness, contrast, saturation and hue jittered in a random order, each by a factor
    drawn from [1 - amount, 1 + amount] (the hue turned by [-hue, hue] * 360 degrees); an
    amount of 0 leaves that property alone."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        for name, v in (("brightness", brightness), ("contrast", contrast),
                        ("saturation", saturation), ("hue", hue)):
            if v < 0:
                raise ValueError(f"RandomColorJitter: {name} {v} is negative")
        self._blends = [RandomBrightness(brightness), RandomContrast(contrast),
                        RandomSaturation(saturation)]
        self._amounts = [brightness, contrast, saturation, hue]
        self._hue = float(hue)

    def _apply(self, x):
        a = _to_numpy(x)
        _rgb_image("RandomColorJitter", a)
        order = _onp.argsort(_janus.random_uniform(0.0, 1.0, (4,)).asnumpy(), kind="stable")
        f = a.astype(_onp.float32)
        for k in order:
            if self._amounts[k] <= 0:
                continue
            if k == 3:
                f = _adjust_hue(f, _uniform(-self._hue, self._hue))
            else:
                f = self._blends[k]._blend(f)
        return _to_janus(_in_dtype(f, a))


class RandomGray(_Transform):
    """With probability ``p``, the image's grey level (0.299 R + 0.587 G + 0.114 B) in each of
    its three channels."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"RandomGray: p {p} is not in [0, 1]")
        self._p = float(p)

    def _apply(self, x):
        a = _to_numpy(x)
        _rgb_image("RandomGray", a)
        if _uniform(0, 1) >= self._p:
            return _to_janus(a)
        gray = (a.astype(_onp.float32) * _GRAY).sum(-1, keepdims=True)
        return _to_janus(_in_dtype(_onp.broadcast_to(gray, a.shape), a))


class CropResize(_Transform):
    """The region of ``width`` x ``height`` at (``x``, ``y``) (its left and top), resized to
    ``size`` (int or (W, H)) when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        if min(x, y) < 0 or min(width, height) <= 0:
            raise ValueError(f"CropResize: region x={x} y={y} width={width} height={height} "
                             "needs x, y >= 0 and width, height > 0")
        if interpolation not in (None, 0, 1):
            raise NotImplementedError(f"CropResize: interpolation {interpolation} is not "
                                      "supported (1, bilinear, is)")
        self._box = (int(x), int(y), int(width), int(height))
        self._size = None if size is None else _size_pair("CropResize", size)

    def _apply(self, x):
        a = _to_numpy(x)
        _check_image("CropResize", a)
        x0, y0, w, h = self._box
        in_h, in_w = a.shape[-3], a.shape[-2]
        if x0 + w > in_w or y0 + h > in_h:
            raise ValueError(f"CropResize: region x={x0} y={y0} width={w} height={h} is outside "
                             f"the image of {in_w} x {in_h} (W x H)")
        out = _crop(a, x0, y0, w, h)
        if self._size is not None:
            out = _resize(out, *self._size)
        return _to_janus(out)


class RandomCrop(_Transform):
    """A random region of ``size`` (int or (W, H)); the image is first padded by ``pad``
    (an int, or NumPy's pad widths for the H and W axes) with ``pad_value``."""

    def __init__(self, size, pad=None, pad_value=0, interpolation=1):
        super().__init__()
        self._w, self._h = _size_pair("RandomCrop", size)
        self._pad, self._pad_value = pad, pad_value

    def _apply(self, x):
        a = _to_numpy(x)
        _check_image("RandomCrop", a)
        if self._pad:
            p = self._pad
            hw = ((p, p), (p, p)) if isinstance(p, _numbers.Integral) else tuple(p)
            widths = ((0, 0),) * (a.ndim - 3) + tuple(hw) + ((0, 0),)
            a = _onp.pad(a, widths, constant_values=self._pad_value)
        h, w = a.shape[-3], a.shape[-2]
        if w < self._w or h < self._h:
            return _to_janus(_center_crop(a, self._w, self._h))
        x0 = min(int(_uniform(0, w - self._w + 1)), w - self._w)
        y0 = min(int(_uniform(0, h - self._h + 1)), h - self._h)
        return _to_janus(_crop(a, x0, y0, self._w, self._h))


def _rotate(a, degrees, zoom_in, zoom_out):
    """a float32 [N, C, H, W] turned by ``degrees`` [N] about its centre, bilinearly sampled
    with zeros outside (MXNet's image.imrotate: BilinearSampler on a rotated grid)."""
    n, _, h, w = a.shape
    rad = _onp.pi * _onp.asarray(degrees, _onp.float32).reshape(n, 1, 1) / 180
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    hm = (_onp.arange(h, dtype=_onp.float32) - hs)[None, :, None]
    wm = (_onp.arange(w, dtype=_onp.float32) - ws)[None, None, :]
    c, s = _onp.cos(rad), _onp.sin(rad)
    gx = (wm * c - hm * s) / ws
    gy = (wm * s + hm * c) / hs
    if zoom_in or zoom_out:
        rho, ang = _onp.sqrt(h * h + w * w), _onp.arctan(h / w)
        ar = _onp.abs(rad)
        max_x = _onp.maximum(_onp.abs(rho * _onp.cos(ang + ar)), _onp.abs(rho * _onp.cos(ang - ar)))
        max_y = _onp.maximum(_onp.abs(rho * _onp.sin(ang + ar)), _onp.abs(rho * _onp.sin(ang - ar)))
        if zoom_out:
            scale = _onp.maximum(max_x / w, max_y / h)
        else:
            scale = _onp.minimum(w / max_x, h / max_y)
        gx, gy = gx * scale, gy * scale
    # The sampler: grid [-1, 1] to pixel coordinates, four neighbours, zero outside.
    sx, sy = (gx + 1) * (w - 1) / 2, (gy + 1) * (h - 1) / 2
    x0, y0 = _onp.floor(sx).astype(_onp.int64), _onp.floor(sy).astype(_onp.int64)
    fx, fy = (sx - x0).astype(_onp.float32), (sy - y0).astype(_onp.float32)
    out = _onp.zeros_like(a)
    batch = _onp.arange(n)[:, None, None]
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yy, xx = y0 + dy, x0 + dx
            inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            v = a[batch, :, _onp.clip(yy, 0, h - 1), _onp.clip(xx, 0, w - 1)]  # [N, H, W, C]
            out += _onp.moveaxis(v * (wy * wx * inside)[..., None], -1, 1)
    return out


def _rotate_tensor(name, x, degrees_fn, zoom_in, zoom_out):
    a = _to_numpy(x)
    if a.dtype != _onp.float32:
        raise TypeError(f"{name}: expected a float32 tensor [C, H, W] or [N, C, H, W] (after "
                        f"ToTensor), got {a.dtype}")
    if a.ndim not in (3, 4):
        raise ValueError(f"{name}: expected a tensor [C, H, W] or [N, C, H, W], got shape "
                         f"{a.shape}")
    batch = a if a.ndim == 4 else a[None]
    out = _rotate(batch, degrees_fn(len(batch)), zoom_in, zoom_out)
    return _to_janus(out if a.ndim == 4 else out[0])


def _check_zoom(name, zoom_in, zoom_out):
    if zoom_in and zoom_out:
        raise ValueError(f"{name}: zoom_in and zoom_out cannot both be True")


class Rotate(_Transform):
    """A float32 tensor [C, H, W] (or [N, C, H, W]) turned by ``rotation_degrees`` about its
    centre (counter-clockwise for a positive angle), its shape kept: corners outside are zero,
    unless ``zoom_in`` (enlarged until no corner is empty) or ``zoom_out`` (shrunk until the
    whole image shows)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        _check_zoom("Rotate", zoom_in, zoom_out)
        self._degrees, self._zoom = float(rotation_degrees), (zoom_in, zoom_out)

    def _apply(self, x):
        return _rotate_tensor("Rotate", x, lambda n: [self._degrees] * n, *self._zoom)


class RandomRotation(_Transform):
    """Rotate by an angle uniform in ``angle_limits`` (degrees; one per image of a batch), with
    probability ``rotate_with_proba``."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError(f"RandomRotation: angle_limits {angle_limits!r} is not (lower, "
                             "upper) with lower < upper")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError(f"RandomRotation: rotate_with_proba {rotate_with_proba} is not in "
                             "[0, 1]")
        _check_zoom("RandomRotation", zoom_in, zoom_out)
        self._limits, self._zoom, self._p = (float(lower), float(upper)), (zoom_in, zoom_out), \
            float(rotate_with_proba)

    def _apply(self, x):
        if _uniform(0, 1) >= self._p:
            return x
        return _rotate_tensor(
            "RandomRotation", x,
            lambda n: _janus.random_uniform(*self._limits, (n,)).asnumpy(), *self._zoom)


class RandomApply(_Transform):
    """``transforms`` (a transform, or a list of them applied in turn) with probability ``p``;
    otherwise the input unchanged."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"RandomApply: p {p} is not in [0, 1]")
        self.transforms = transforms if callable(transforms) else Compose(transforms)
        self.p = float(p)

    def _apply(self, x):
        if _uniform(0, 1) >= self.p:
            return x
        return self.transforms(x)
