"""C++ errors as Python exceptions of matching types, with the C++ message."""
import pytest

import janus as mx
from janus import gluon, np


def test_shape_mismatch_is_a_value_error_naming_the_shapes():
    with pytest.raises(ValueError) as e:
        np.ones((2, 3)) + np.ones((4, 5))
    assert isinstance(e.value, mx.MXNetError)
    assert "[2, 3]" in str(e.value) and "[4, 5]" in str(e.value)


def test_dot_shape_error():
    with pytest.raises(mx.base.ShapeError):
        np.dot(np.ones((2, 3)), np.ones((2, 3)))


def test_gpu_is_a_clear_error():
    with pytest.raises(mx.MXNetError, match="no CUDA backend"):
        mx.gpu(0)
    assert mx.context.num_gpus() == 0


def test_type_and_index_errors():
    with pytest.raises(TypeError):
        np.ones(3).astype("complex64")
    with pytest.raises(IndexError):
        np.ones((2, 3)).sum(axis=5)
    with pytest.raises(ValueError):
        np.ones(3).item()


def test_kernel_error_surfaces_at_the_wait():
    logits = np.ones((2, 3))
    labels = np.array([0, 7], dtype="int64")
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(logits, labels)  # returns at once
    with pytest.raises(IndexError):
        loss.asnumpy()
    np.ones(2).asnumpy()  # the engine stays usable


def test_uninitialised_block():
    net = gluon.nn.Dense(2)
    with pytest.raises(mx.MXNetError):
        net(np.ones((1, 2))).wait_to_read()


def test_missing_recurrent_cells_are_a_clear_not_supported_error():
    from janus.gluon import rnn
    from janus.gluon.contrib import rnn as contrib_rnn
    with pytest.raises(mx.base.NotSupportedError,
                       match="gluon.contrib.rnn.Conv1DGRUCell: Janus does not have the "
                             "convolutional recurrent cells"):
        contrib_rnn.Conv1DGRUCell
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        rnn.Nope
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        contrib_rnn.Nope


def test_export_before_a_hybridized_call_is_named(tmp_path):
    net = mx.gluon.nn.Dense(2)
    net.initialize()
    net(mx.np.ones((1, 3)))
    with pytest.raises(mx.MXNetError, match="hybridize|hybridized"):
        net.export(str(tmp_path / "net"))


def test_buffer_of_a_traced_array_is_a_trace_error():
    from janus.gluon import nn

    class Peek(nn.HybridBlock):
        def forward(self, x):
            memoryview(x)
            return x

    net = Peek()
    net.hybridize()
    with pytest.raises(mx.base.TraceError, match="symbolic array .* no memory"):
        net(mx.np.ones((2,)))


def test_kernel_error_surfaces_through_the_buffer_protocol():
    import numpy as onp
    logits = np.ones((2, 3))
    labels = np.array([0, 7], dtype="int64")
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(logits, labels)
    with pytest.raises(IndexError):
        onp.asarray(loss)
    with pytest.raises(IndexError):
        memoryview(loss)
    assert onp.asarray(np.ones(2)).tolist() == [1.0, 1.0]
