// Operator API of the nn family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

/// exp(x) / sum(exp(x)) along `axis` (negative from the end); float32 or float64.
NDArray softmax(const NDArray& x, int64_t axis = -1);
/// x - log(sum(exp(x))) along `axis`, computed without overflow.
NDArray log_softmax(const NDArray& x, int64_t axis = -1);
/// Per-sample cross-entropy -log(softmax(logits)[i, labels[i]]) of logits [N, C] and int32 or
/// int64 labels [N]: a loss of shape [N] (take its mean or sum for a scalar). Differentiable
/// in `logits` only. A label outside [0, C) makes the kernel throw IndexError at the wait point.
NDArray softmax_cross_entropy(const NDArray& logits, const NDArray& labels);
/// Integer labels (int32 or int64, any shape) to one-hot rows: shape labels.shape + [depth].
NDArray one_hot(const NDArray& labels, int64_t depth, DType dtype = DType::kFloat32);
/// y = x · weightᵀ + bias for x [N, K], weight [M, K] (out, in) and bias [M]; oneDNN inner
/// product for float32. For a layer without bias pass zeros([M]).
NDArray fully_connected(const NDArray& x, const NDArray& weight, const NDArray& bias);
/// In training, zeroes each element with probability p and scales the others by 1/(1-p); the
/// identity otherwise. Draws from the seeded counter-based stream, so a program run again after
/// the same seed() drops the same elements. The operator's second output, the applied mask, is
/// available through ops::invoke; this function returns y only.
NDArray dropout(const NDArray& x, double p, bool training);
/// Rows of weight [V, D] picked by int32/int64 indices of any shape: indices.shape + [D]. An
/// index outside [0, V) makes the kernel throw IndexError at the wait point.
NDArray embedding(const NDArray& indices, const NDArray& weight);
/// The weight gradient of embedding: the rows of dy (indices.shape + [D]) added into zeros of
/// shape [num_embeddings, D] at their indices.
NDArray embedding_backward(const NDArray& indices, const NDArray& dy, int64_t num_embeddings);
/// (x - mean) / sqrt(var + eps) * gamma + beta with mean and (biased) variance over the last
/// axis of x; gamma and beta have that axis' extent.
NDArray layer_norm(const NDArray& x, const NDArray& gamma, const NDArray& beta,
                   double eps = 1e-5);
/// {dx, dgamma, dbeta} of layer_norm for the output gradient dy (not differentiable again).
std::vector<NDArray> layer_norm_backward(const NDArray& x, const NDArray& gamma,
                                         const NDArray& dy, double eps = 1e-5);

}  // namespace janus
