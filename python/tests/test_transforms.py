"""gluon.data.vision.transforms against NumPy, and with transform_first + DataLoader as d2l
uses them."""
import os

import numpy as onp
import pytest

import janus as mx
from janus import gluon, np
from janus.gluon.data.vision import transforms as T

rng = onp.random.RandomState(0)
IMG = rng.randint(0, 256, (8, 10, 3)).astype(onp.uint8)
IMGF = rng.rand(6, 9, 3).astype(onp.float32)


def bilinear(a, h, w):
    """Half-pixel-centre bilinear resize, one output pixel at a time."""
    in_h, in_w = a.shape[:2]
    out = onp.zeros((h, w, a.shape[2]))
    for i in range(h):
        for j in range(w):
            y = min(max((i + 0.5) * in_h / h - 0.5, 0), in_h - 1)
            x = min(max((j + 0.5) * in_w / w - 0.5, 0), in_w - 1)
            y0, x0 = int(y), int(x)
            y1, x1 = min(y0 + 1, in_h - 1), min(x0 + 1, in_w - 1)
            fy, fx = y - y0, x - x0
            out[i, j] = (a[y0, x0] * (1 - fy) * (1 - fx) + a[y0, x1] * (1 - fy) * fx
                         + a[y1, x0] * fy * (1 - fx) + a[y1, x1] * fy * fx)
    return out


def test_to_tensor_cast_and_normalize():
    t = T.ToTensor()(np.array(IMG))
    assert t.shape == (3, 8, 10) and t.dtype == onp.float32
    onp.testing.assert_allclose(t.asnumpy(), onp.moveaxis(IMG, -1, 0) / 255.0, rtol=1e-6)
    assert T.Cast("float16")(np.array(IMGF)).dtype == onp.float16
    x = onp.moveaxis(IMGF, -1, 0).copy()
    got = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.25, 2.0))(np.array(x)).asnumpy()
    want = (x - onp.array([0.1, 0.2, 0.3])[:, None, None]) / onp.array([0.5, 0.25, 2])[:, None, None]
    onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("size,hw", [((13, 11), (11, 13)), ((4, 3), (3, 4)), (5, (5, 5))])
def test_resize_is_bilinear_with_half_pixel_centres(size, hw):
    got = T.Resize(size)(np.array(IMGF)).asnumpy()
    onp.testing.assert_allclose(got, bilinear(IMGF, *hw), rtol=1e-5, atol=1e-6)
    got8 = T.Resize(size)(np.array(IMG)).asnumpy()
    assert got8.dtype == onp.uint8
    assert abs(got8.astype(float) - onp.rint(bilinear(IMG.astype(float), *hw))).max() <= 1


def test_resize_keep_ratio_scales_the_shorter_side():
    assert T.Resize(4, keep_ratio=True)(np.array(IMGF)).shape == (4, 6, 3)  # 6x9 -> 4x6


def test_center_crop_and_its_enlarging_case():
    got = T.CenterCrop((5, 3))(np.array(IMGF)).asnumpy()
    onp.testing.assert_array_equal(got, IMGF[1:4, 2:7])
    big = T.CenterCrop(12)(np.array(IMGF)).asnumpy()  # 6 x 6 centre, enlarged to 12 x 12
    onp.testing.assert_allclose(big, bilinear(IMGF[:, 1:7], 12, 12), rtol=1e-5, atol=1e-6)


def test_random_transforms_are_seeded_and_keep_the_pixels():
    mx.random.seed(3)
    a = [T.RandomFlipLeftRight()(np.array(IMG)).asnumpy() for _ in range(16)]
    mx.random.seed(3)
    b = [T.RandomFlipLeftRight()(np.array(IMG)).asnumpy() for _ in range(16)]
    assert all((x == y).all() for x, y in zip(a, b))
    flipped = sum((x == IMG[:, ::-1]).all() for x in a)
    assert 0 < flipped < 16 and all((x == IMG).all() or (x == IMG[:, ::-1]).all() for x in a)
    c = [T.RandomFlipTopBottom()(np.array(IMG)).asnumpy() for _ in range(16)]
    assert all((x == IMG).all() or (x == IMG[::-1]).all() for x in c)
    crop = T.RandomResizedCrop((7, 5))(np.array(IMGF))
    assert crop.shape == (5, 7, 3)


def test_color_jitter_blends_with_the_documented_images():
    mx.random.seed(5)
    b = T.RandomBrightness(0.5)(np.array(IMGF)).asnumpy()
    alpha = b / IMGF
    assert onp.allclose(alpha, alpha.flat[0], rtol=1e-5) and 0.5 <= alpha.flat[0] <= 1.5
    gray = (IMGF * [0.299, 0.587, 0.114]).sum(-1, keepdims=True)
    s = T.RandomSaturation(0.5)(np.array(IMGF)).asnumpy()
    # s = a x + (1 - a) gray: solve a from one element and check every other.
    a = (s[0, 0, 0] - gray[0, 0, 0]) / (IMGF[0, 0, 0] - gray[0, 0, 0])
    onp.testing.assert_allclose(s, a * IMGF + (1 - a) * gray, rtol=1e-4, atol=1e-5)
    c = T.RandomContrast(0.5)(np.array(IMGF)).asnumpy()
    m = gray.mean()
    a = (c[0, 0, 0] - m) / (IMGF[0, 0, 0] - m)
    onp.testing.assert_allclose(c, a * IMGF + (1 - a) * m, rtol=1e-4, atol=1e-5)


def test_transform_first_with_a_dataloader_as_d2l_does():
    data = onp.stack([IMG] * 5)
    ds = gluon.data.ArrayDataset(np.array(data), np.array(onp.arange(5, dtype=onp.int32)))
    trans = T.Compose([T.Resize(4), T.ToTensor(), T.Normalize(0.5, 0.5)])
    loader = gluon.data.DataLoader(ds.transform_first(trans), batch_size=2, shuffle=True,
                                   num_workers=2)
    assert len(loader) == 3
    labels = []
    for X, y in loader:
        assert X.shape[1:] == (3, 4, 4) and X.dtype == onp.float32
        want = (onp.moveaxis(onp.rint(bilinear(IMG.astype(float), 4, 4)), -1, 0) / 255 - 0.5) / 0.5
        onp.testing.assert_allclose(X.asnumpy()[0], want, atol=1 / 255 / 0.5 + 1e-6)
        labels += y.asnumpy().tolist()
    assert sorted(labels) == [0, 1, 2, 3, 4]
    discard = gluon.data.DataLoader(ds.transform_first(trans), 2, last_batch="discard")
    assert len(discard) == 2 and len(list(discard)) == 2


def test_fashion_mnist_images_reach_transforms_as_mxnet_uint8():
    ds = gluon.data.vision.FashionMNIST(train=False)
    raw = ds.transform_first(lambda x: x)[0][0]
    assert raw.shape == (28, 28, 1) and raw.dtype == onp.uint8
    onp.testing.assert_allclose(T.ToTensor()(raw).asnumpy(), ds[0][0].asnumpy(), atol=1e-7)
    assert ds.transform_first(T.ToTensor()) is ds  # the C++ loader's fast path
    X, y = next(iter(gluon.data.DataLoader(
        ds.transform_first(T.Compose([T.Resize(32), T.ToTensor()])), 8)))
    assert X.shape == (8, 1, 32, 32) and y.shape == (8,)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="Resize: size -1 is not a positive int"):
        T.Resize(-1)
    with pytest.raises(ValueError, match=r"ToTensor: expected an image \[H, W, C\]"):
        T.ToTensor()(np.ones((4, 4)))
    with pytest.raises(ValueError, match="Normalize: 2 values of mean for 3 channels"):
        T.Normalize((0.1, 0.2))(np.ones((3, 2, 2)))
    with pytest.raises(ValueError, match="RandomResizedCrop: scale"):
        T.RandomResizedCrop(4, scale=(0.5, 0.1))
    with pytest.raises(TypeError, match="is not callable"):
        gluon.data.ArrayDataset(np.ones((2, 2))).transform_first(3)
    with pytest.raises(ValueError, match="batch_size is None"):
        gluon.data.DataLoader(gluon.data.ArrayDataset(np.ones((2, 2))))


# Apache MXNet 1.9.1's outputs (tests/fixtures/mxnet/make_transform_fixtures.py).
MXNET = onp.load(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "mxnet",
                              "transforms", "transforms.npz"))


def test_crop_resize_and_rotate_equal_mxnet():
    img, fimg, ten = MXNET["img"], MXNET["fimg"], MXNET["ten"]
    onp.testing.assert_array_equal(T.CropResize(1, 2, 5, 4)(np.array(img)).asnumpy(),
                                   MXNET["crop"])
    got = T.CropResize(1, 2, 5, 4, size=(3, 2))(np.array(fimg)).asnumpy()
    onp.testing.assert_allclose(got, MXNET["crop_resize"], rtol=1e-6)
    for deg in (30.0, -75.0):
        onp.testing.assert_allclose(T.Rotate(deg)(np.array(ten[0])).asnumpy(),
                                    MXNET[f"rotate{deg}"], atol=1e-6)
        onp.testing.assert_allclose(T.Rotate(deg, zoom_in=True)(np.array(ten)).asnumpy(),
                                    MXNET[f"rotate_zoom_in{deg}"], atol=1e-6)
        onp.testing.assert_allclose(T.Rotate(deg, zoom_out=True)(np.array(ten)).asnumpy(),
                                    MXNET[f"rotate_zoom_out{deg}"], atol=1e-6)


def test_hue_lighting_and_uint8_saturation_equal_mxnet_kernels():
    img, fimg = MXNET["img"], MXNET["fimg"]
    for a in (0.0, 0.3, 0.9, 1.25):
        # float32 arithmetic in another order: within a millionth of the 0..255 range.
        onp.testing.assert_allclose(T._adjust_hue(fimg, a), MXNET[f"hue{a}"], atol=255e-6)
        got = T._in_dtype(T._adjust_hue(img.astype(onp.float32), a), img)
        assert abs(got.astype(int) - MXNET[f"hue_uint8_{a}"]).max() <= 1  # truncation edges
    onp.testing.assert_allclose(T._adjust_lighting(fimg, (0.1, -0.2, 0.3)), MXNET["lighting"],
                                atol=255e-6)
    onp.testing.assert_array_equal(
        T._in_dtype(T._adjust_lighting(img.astype(onp.float32), (0.5, -0.2, 0.3)), img),
        MXNET["lighting_uint8"])
    onp.testing.assert_array_equal(T._in_dtype(img.astype(onp.float32) * 1.337, img),
                                   MXNET["brightness_uint8"])


def test_random_hue_turns_hue_and_keeps_lightness():
    fimg = MXNET["fimg"]
    mx.random.seed(7)
    a = T.RandomHue(0.2)(np.array(fimg)).asnumpy()
    mx.random.seed(7)
    assert (T.RandomHue(0.2)(np.array(fimg)).asnumpy() == a).all()
    # HLS lightness (max + min) / 2 is what a hue turn keeps.
    light = lambda x: x.max(-1) + x.min(-1)  # noqa: E731
    onp.testing.assert_allclose(light(a), light(fimg), rtol=1e-4)
    assert not onp.allclose(a, fimg)
    onp.testing.assert_allclose(T.RandomHue(0)(np.array(fimg)).asnumpy(), fimg, atol=1e-3)


def test_random_lighting_adds_one_offset_per_channel():
    fimg = MXNET["fimg"]
    mx.random.seed(2)
    out = T.RandomLighting(0.1)(np.array(fimg)).asnumpy()
    shift = out - fimg
    onp.testing.assert_allclose(shift, onp.broadcast_to(shift[0, 0], shift.shape), atol=1e-3)
    assert onp.abs(shift[0, 0]).max() > 0
    onp.testing.assert_array_equal(T.RandomLighting(0)(np.array(fimg)).asnumpy(), fimg)


def test_random_color_jitter_is_seeded_and_off_when_all_amounts_are_zero():
    img = MXNET["img"]
    mx.random.seed(4)
    a = T.RandomColorJitter(0.4, 0.4, 0.4, 0.1)(np.array(img)).asnumpy()
    mx.random.seed(4)
    b = T.RandomColorJitter(0.4, 0.4, 0.4, 0.1)(np.array(img)).asnumpy()
    assert a.dtype == onp.uint8 and (a == b).all() and not (a == img).all()
    onp.testing.assert_array_equal(T.RandomColorJitter()(np.array(img)).asnumpy(), img)
    # Brightness alone: every pixel times one factor.
    f = T.RandomColorJitter(brightness=0.5)(np.array(MXNET["fimg"])).asnumpy() / MXNET["fimg"]
    assert onp.allclose(f, f.flat[0], rtol=1e-5) and 0.5 <= f.flat[0] <= 1.5


def test_random_gray_random_crop_and_random_apply():
    img = MXNET["img"]
    gray = T.RandomGray(1.0)(np.array(img)).asnumpy()
    want = (img.astype(onp.float32) * [0.299, 0.587, 0.114]).sum(-1, keepdims=True)
    onp.testing.assert_array_equal(gray, onp.broadcast_to(want.astype(onp.uint8), img.shape))
    onp.testing.assert_array_equal(T.RandomGray(0.0)(np.array(img)).asnumpy(), img)
    mx.random.seed(1)
    grays = [bool((T.RandomGray(0.5)(np.array(img)).asnumpy() == gray).all()) for _ in range(32)]
    assert 0 < sum(grays) < 32
    for _ in range(8):
        c = T.RandomCrop((4, 3))(np.array(img)).asnumpy()
        assert c.shape == (3, 4, 3)
        # the crop is a window of the image
        assert any((img[y:y + 3, x:x + 4] == c).all() for y in range(5) for x in range(6))
    padded = T.RandomCrop(9, pad=1)(np.array(img)).asnumpy()
    assert padded.shape == (9, 9, 3)
    flip = T.RandomApply([T.RandomFlipTopBottom(), T.Cast("float32")], p=1.0)
    assert flip(np.array(img)).dtype == onp.float32
    assert T.RandomApply(T.Cast("float32"), p=0.0)(np.array(img)).dtype == onp.uint8
    mx.random.seed(9)
    applied = [T.RandomApply(T.Cast("float32"), p=0.5)(np.array(img)).dtype == onp.float32
               for _ in range(32)]
    assert 0 < sum(applied) < 32


def test_random_rotation_draws_an_angle_in_its_limits():
    ten = MXNET["ten"]
    mx.random.seed(6)
    got = T.RandomRotation((10, 20))(np.array(ten[0])).asnumpy()
    # The angle that was drawn is among 10..20: the closest of a fine sweep matches.
    err = [abs(T.Rotate(d)(np.array(ten[0])).asnumpy() - got).max()
           for d in onp.linspace(10, 20, 101)]
    assert min(err) < 0.02
    same = T.RandomRotation((10, 20), rotate_with_proba=0.0)(np.array(ten[0]))
    onp.testing.assert_array_equal(same.asnumpy(), ten[0])


def test_new_transforms_refuse_bad_arguments():
    with pytest.raises(TypeError, match="Rotate: expected a float32 tensor"):
        T.Rotate(10)(np.array(MXNET["img"]))
    with pytest.raises(ValueError, match="zoom_in and zoom_out cannot both be True"):
        T.Rotate(10, zoom_in=True, zoom_out=True)
    with pytest.raises(ValueError, match="angle_limits"):
        T.RandomRotation((20, 10))
    with pytest.raises(ValueError, match=r"CropResize: region x=5 y=0 width=5 height=4 is outside "
                                         r"the image of 9 x 7"):
        T.CropResize(5, 0, 5, 4)(np.array(MXNET["img"]))
    with pytest.raises(ValueError, match="RandomHue: expected 3 \\(RGB\\) channels"):
        T.RandomHue(0.1)(np.ones((4, 4, 1)))
    with pytest.raises(ValueError, match="RandomApply: p 2 is not in"):
        T.RandomApply([], p=2)
    with pytest.raises(ValueError, match="RandomColorJitter: hue -1 is negative"):
        T.RandomColorJitter(hue=-1)
