// The CTC loss operator (src/ops/nn/ctc_loss.cc). Layer: ops.
#pragma once

#include "janus/core/ndarray.h"

namespace janus {

/// Connectionist Temporal Classification loss per sequence, -log p(label | logits), as MXNet's
/// CTCLoss with blank_label='last': logits [T, N, C] (unnormalised; softmax over C), class
/// C - 1 the blank; labels [N, L] of classes in [0, C - 1); sequence n uses its first
/// data_lengths[n] steps and label_lengths[n] labels (labels and lengths of any numeric dtype,
/// whole numbers). Gives [N]; 0 (and a zero gradient) for a sequence whose label has no
/// alignment in its steps, as MXNet gives. Differentiable in logits.
NDArray ctc_loss(const NDArray& logits, const NDArray& labels, const NDArray& data_lengths,
                 const NDArray& label_lengths);
/// The gradient of ctc_loss with respect to the logits for the loss's gradient dy [N]: [T, N, C],
/// zero past each sequence's length and for a sequence without an alignment.
NDArray ctc_loss_backward(const NDArray& logits, const NDArray& labels, const NDArray& data_lengths,
                          const NDArray& label_lengths, const NDArray& dy);

}  // namespace janus
