"""Writes legacy_ops_mxnet.json: inputs, outputs and input gradients of MXNet 1.9.1's legacy
operators (mx.nd.X), which python/tests/test_legacy_ops_more.py checks Janus against without
MXNet. Run with MXNet 1.9.1's Python: python make_legacy_ops_fixture.py > legacy_ops_mxnet.json"""
import json

import mxnet as mx
import numpy as onp
from mxnet import autograd, nd

rs = onp.random.RandomState(0)


def randn(*shape):
    return rs.randn(*shape).astype("float32")


X = randn(4, 3)
LAB = onp.array([0, 2, 1, 2], dtype="float32")
X3 = randn(3, 2, 4)
LAB3 = rs.randint(0, 2, (3, 4)).astype("float32")
P3 = randn(2, 3, 4)
PLAB = rs.randint(0, 4, (2, 3)).astype("float32")
IMG = randn(2, 3, 2, 3)
SEQ = randn(4, 2, 3)

# (name, op, inputs, kwargs, gradient of the first input under backward() with a head of ones)
CASES = [
    ("softmax_default", "SoftmaxOutput", [X, LAB], {}, True),
    ("softmax_scale_batch", "SoftmaxOutput", [X, LAB], dict(grad_scale=2.0, normalization="batch"), True),
    ("softmax_ignore_null", "SoftmaxOutput", [X, LAB], dict(use_ignore=True, ignore_label=2), True),
    ("softmax_ignore_valid", "SoftmaxOutput", [X, LAB], dict(use_ignore=True, ignore_label=2, normalization="valid"), True),
    ("softmax_valid_no_ignore", "SoftmaxOutput", [X, LAB], dict(normalization="valid"), True),
    ("softmax_smooth", "SoftmaxOutput", [X, LAB], dict(smooth_alpha=0.1), True),
    ("softmax_multi", "SoftmaxOutput", [X3, LAB3], dict(multi_output=True), True),
    ("softmax_multi_batch", "SoftmaxOutput", [X3, LAB3], dict(multi_output=True, normalization="batch"), True),
    ("softmax_multi_valid", "SoftmaxOutput", [X3, LAB3], dict(multi_output=True, normalization="valid"), True),
    ("softmax_multi_valid_ignore", "SoftmaxOutput", [X3, LAB3], dict(multi_output=True, normalization="valid", use_ignore=True, ignore_label=1), True),
    ("softmax_multi_ignore_scale", "SoftmaxOutput", [X3, LAB3], dict(multi_output=True, use_ignore=True, ignore_label=0, grad_scale=3.0), True),
    ("softmax_preserve", "SoftmaxOutput", [P3, PLAB], dict(preserve_shape=True), True),
    ("softmax_preserve_batch", "SoftmaxOutput", [P3, PLAB], dict(preserve_shape=True, normalization="batch"), True),
    ("softmax_preserve_valid_ignore", "SoftmaxOutput", [P3, PLAB], dict(preserve_shape=True, normalization="valid", use_ignore=True, ignore_label=0), True),
    ("softmax_alias", "Softmax", [X, LAB], {}, True),
    ("linear_regression", "LinearRegressionOutput", [X, randn(4, 3)], dict(grad_scale=2.0), True),
    ("logistic_regression", "LogisticRegressionOutput", [X, (randn(4, 3) > 0).astype("float32")], {}, True),
    ("mae_regression", "MAERegressionOutput", [X, randn(4, 3)], {}, True),
    ("make_loss", "MakeLoss", [X], dict(grad_scale=0.5), True),
    ("norm_all", "norm", [X], {}, True),
    ("norm_l1_axis", "norm", [X], dict(ord=1, axis=1), True),
    ("norm_l2_axes_keepdims", "norm", [X3], dict(ord=2, axis=(0, 2), keepdims=True), True),
    ("tile_2", "tile", [X], dict(reps=(2,)), False),
    ("tile_3", "tile", [X], dict(reps=(2, 1, 2)), False),
    ("repeat_axis", "repeat", [X], dict(repeats=2, axis=1), False),
    ("repeat_flat", "repeat", [X], dict(repeats=2), False),
    ("reverse", "reverse", [X3], dict(axis=1), False),
    ("flip_axes", "flip", [X3], dict(axis=(0, 2)), False),
    ("upsampling_nearest", "UpSampling", [IMG], dict(scale=2, sample_type="nearest"), True),
    ("upsampling_concat", "UpSampling", [IMG, randn(2, 1, 4, 6)], dict(scale=2, sample_type="nearest", num_args=2), False),
    ("upsampling_sum", "UpSampling", [IMG, randn(2, 3, 4, 6)], dict(scale=2, sample_type="nearest", num_args=2, multi_input_mode="sum"), False),
    ("l2norm_instance", "L2Normalization", [IMG], {}, True),
    ("l2norm_channel", "L2Normalization", [IMG], dict(mode="channel"), True),
    ("l2norm_spatial", "L2Normalization", [IMG], dict(mode="spatial", eps=1e-3), True),
    ("l2norm_2d", "L2Normalization", [X], {}, False),
    ("instance_norm", "InstanceNorm", [IMG, randn(3), randn(3)], dict(eps=1e-3), True),
    ("group_norm", "GroupNorm", [randn(2, 4, 3), randn(2), randn(2)], dict(num_groups=2), True),
    ("smooth_l1", "smooth_l1", [X * 2], dict(scalar=1.0), True),
    ("smooth_l1_sigma", "smooth_l1", [X], dict(scalar=2.0), True),
    ("slice", "slice", [X3], dict(begin=(1, None, 0), end=(3, None, 4), step=(1, None, 2)), False),
    ("slice_negative", "slice", [X3], dict(begin=(None, 1), end=(None, None), step=(-1, -1)), False),
    ("slice_like", "slice_like", [X3, randn(2, 1, 3)], {}, False),
    ("slice_like_axes", "slice_like", [X3, randn(2, 1, 3)], dict(axes=(0, 2)), False),
    ("broadcast_like", "broadcast_like", [randn(1, 3), X], {}, False),
    ("broadcast_axis", "broadcast_axis", [randn(1, 3, 1)], dict(axis=(0, 2), size=(2, 4)), False),
    ("pad_constant", "Pad", [IMG], dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5), False),
    ("pad_edge", "Pad", [IMG], dict(mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), False),
    ("sequence_last", "SequenceLast", [SEQ, onp.array([2, 4], dtype="float32")], dict(use_sequence_length=True), True),
    ("sequence_last_plain", "SequenceLast", [SEQ], {}, False),
    ("sequence_mask", "SequenceMask", [SEQ, onp.array([1, 3], dtype="float32")], dict(use_sequence_length=True, value=-1.0), False),
    ("sequence_reverse", "SequenceReverse", [SEQ, onp.array([2, 4], dtype="float32")], dict(use_sequence_length=True), False),
    ("maximum_scalar", "maximum", [X, 0.5], {}, False),
    ("minimum_arrays", "minimum", [X, randn(4, 3)], {}, False),
    ("power_arrays", "power", [onp.abs(X) + 0.1, randn(4, 3)], {}, False),
    ("broadcast_not_equal", "broadcast_not_equal", [onp.round(X), onp.round(randn(1, 3))], {}, False),
    ("broadcast_greater_equal", "broadcast_greater_equal", [X, randn(1, 3)], {}, False),
    ("broadcast_lesser_equal", "broadcast_lesser_equal", [X, randn(4, 1)], {}, False),
    ("broadcast_mod", "broadcast_mod", [X * 3, onp.array([[1.5, -2.0, 2.5]], dtype="float32")], {}, False),
    ("broadcast_logical_and", "broadcast_logical_and", [onp.round(X), onp.round(randn(1, 3))], {}, False),
    ("broadcast_logical_or", "broadcast_logical_or", [onp.round(X), onp.round(randn(1, 3))], {}, False),
    ("floor", "floor", [X * 2], {}, False),
    ("ceil", "ceil", [X * 2], {}, False),
    ("round", "round", [onp.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6], dtype="float32")], {}, False),
    ("rint", "rint", [onp.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6], dtype="float32")], {}, False),
    ("trunc", "trunc", [X * 2], {}, False),
    ("fix", "fix", [X * 2], {}, False),
    ("log2", "log2", [onp.abs(X) + 0.1], {}, True),
    ("log10", "log10", [onp.abs(X) + 0.1], {}, True),
    ("expm1", "expm1", [X], {}, True),
    ("cbrt", "cbrt", [X], {}, False),
    ("hard_sigmoid", "hard_sigmoid", [X * 3], dict(alpha=0.3, beta=0.4), True),
    ("softsign", "softsign", [X], {}, True),
    ("logical_not", "logical_not", [onp.round(X)], {}, False),
    ("moments", "moments", [X3], dict(axes=(0, 2)), False),
    ("moments_keepdims", "moments", [X3], dict(axes=(1,), keepdims=True), False),
    ("diag_2d", "diag", [X], {}, False),
    ("diag_2d_k", "diag", [X], dict(k=1), False),
    ("diag_1d", "diag", [randn(3)], dict(k=-1), False),
    ("softmax_cross_entropy", "softmax_cross_entropy", [X, LAB], {}, True),
    ("softmax_activation", "SoftmaxActivation", [X], {}, True),
    ("softmax_activation_channel", "SoftmaxActivation", [IMG], dict(mode="channel"), True),
    ("gather_nd", "gather_nd", [X3, onp.array([[0, 2, 1], [1, 0, 1]], dtype="float32")], {}, True),
    ("sum_axis", "sum_axis", [X3], dict(axis=1), False),
    ("max_axis", "max_axis", [X3], dict(axis=(0, 2), keepdims=True), False),
    ("identity", "identity", [X], {}, False),
    ("broadcast_axes", "broadcast_axes", [randn(1, 3)], dict(axis=0, size=2), False),
    ("upsampling_bilinear", "UpSampling", [IMG, randn(3, 1, 4, 4)], dict(scale=2, sample_type="bilinear", num_filter=3), True),
    ("upsampling_bilinear_3", "UpSampling", [IMG, randn(3, 1, 5, 5)], dict(scale=3, sample_type="bilinear", num_filter=3), True),
    ("broadcast_equal", "broadcast_equal", [onp.round(X), onp.round(randn(1, 3))], {}, False),
    ("broadcast_greater", "broadcast_greater", [X, randn(4, 1)], {}, False),
    ("broadcast_lesser", "broadcast_lesser", [X, randn(1, 3)], {}, False),
    ("argmax_channel", "argmax_channel", [X], {}, False),
    ("shape_array", "shape_array", [X3], {}, False),
    ("size_array", "size_array", [X3], {}, False),
    ("split_v2_indices", "split_v2", [X3], dict(indices_or_sections=(1, 3), axis=2), False),
    ("split_v2_sections", "split_v2", [X3], dict(indices_or_sections=3, axis=0, squeeze_axis=True), False),
    ("khatri_rao", "khatri_rao", [randn(2, 3), randn(4, 3), randn(1, 3)], {}, False),
    ("linalg_gemm2", "linalg_gemm2", [X3, randn(3, 3, 4)], dict(transpose_b=True, alpha=2.0), True),
    ("linalg_gemm2_ta", "linalg_gemm2", [X, randn(4, 2)], dict(transpose_a=True), True),
    ("nansum", "nansum", [onp.where(X > 1, onp.nan, X).astype("float32")], dict(axis=1), False),
    ("nanprod", "nanprod", [onp.where(X > 1, onp.nan, X).astype("float32")], {}, False),
]


def as_list(a):
    return a.tolist() if isinstance(a, onp.ndarray) else a


out = []
for name, op, inputs, kwargs, grad in CASES:
    args = [nd.array(a) if isinstance(a, onp.ndarray) else a for a in inputs]
    if grad:
        args[0].attach_grad()
        with autograd.record():
            y = getattr(nd, op)(*args, **kwargs)
        (y[0] if isinstance(y, list) else y).backward()
    else:
        y = getattr(nd, op)(*args, **kwargs)
    ys = y if isinstance(y, (list, tuple)) else [y]
    out.append({"name": name, "op": op, "kwargs": kwargs,
                "inputs": [as_list(a) for a in inputs],
                "input_shapes": [list(a.shape) if isinstance(a, onp.ndarray) else None for a in inputs],
                "outputs": [a.asnumpy().astype("float64").tolist() for a in ys],
                "output_dtypes": [str(a.dtype) for a in ys],
                "grad": args[0].grad.asnumpy().tolist() if grad else None})
print(json.dumps({"mxnet": mx.__version__, "cases": out}))
