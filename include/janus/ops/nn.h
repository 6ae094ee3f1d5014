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
/// Its gradient: (softmax(logits) - one_hot(labels)) * dloss[:, None], in one pass.
NDArray softmax_cross_entropy_backward(const NDArray& logits, const NDArray& labels,
                                       const NDArray& dloss);
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
NDArray layer_norm(const NDArray& x, const NDArray& gamma, const NDArray& beta, double eps = 1e-5);
/// {dx, dgamma, dbeta} of layer_norm for the output gradient dy (not differentiable again).
std::vector<NDArray> layer_norm_backward(const NDArray& x, const NDArray& gamma, const NDArray& dy,
                                         double eps = 1e-5);

/// 2-D convolution (cross-correlation) of x [N, C, H, W] with weight [O, C / groups, KH, KW]
/// plus bias [O]: y [N, O, OH, OW], OH = (H + 2 padding - dilation (KH - 1) - 1) / stride + 1.
/// stride, padding and dilation take (height, width) or one value for both. float32 runs
/// through oneDNN. For a layer without bias pass zeros([O]).
NDArray conv2d(const NDArray& x, const NDArray& weight, const NDArray& bias,
               std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
               std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);
/// Transposed convolution (MXNet's Deconvolution) over 1 to 3 spatial axes, by x's rank: x [N,
/// C, in...] with weight [C, O / groups, k...] plus bias [O]: y [N, O, out...], out = (in - 1)
/// stride - 2 padding + dilation (k - 1) + 1 + output_padding (output_padding below the stride).
/// The attributes take one value per spatial axis or one for all.
NDArray conv_transpose(const NDArray& x, const NDArray& weight, const NDArray& bias,
                       std::vector<int64_t> stride = {1}, std::vector<int64_t> padding = {0},
                       std::vector<int64_t> output_padding = {0},
                       std::vector<int64_t> dilation = {1}, int64_t groups = 1);
/// The input gradient of conv2d: dx [N, C, input_size] from dy and weight.
NDArray conv2d_backward_data(const NDArray& dy, const NDArray& weight,
                             std::vector<int64_t> input_size, std::vector<int64_t> stride = {1, 1},
                             std::vector<int64_t> padding = {0, 0},
                             std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);
/// The weight gradient of conv2d: dweight [O, C / groups, kernel_size] from x and dy.
NDArray conv2d_backward_weight(const NDArray& x, const NDArray& dy,
                               std::vector<int64_t> kernel_size,
                               std::vector<int64_t> stride = {1, 1},
                               std::vector<int64_t> padding = {0, 0},
                               std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);

/// The maximum of each kernel_size window of x [N, C, H, W]; stride defaults to the kernel
/// size; padding (at most half the kernel) never wins. ceil_mode rounds the output extent up
/// (MXNet's pooling_convention 'full'): a last window may run past the padding (clipped there)
/// or start past the input (empty: the dtype's lowest value, as in MXNet).
NDArray max_pool2d(const NDArray& x, std::vector<int64_t> kernel_size,
                   std::vector<int64_t> stride = {}, std::vector<int64_t> padding = {0, 0},
                   bool ceil_mode = false);
/// The input gradient of max_pool2d (dy to the first maximum of each window).
NDArray max_pool2d_backward(const NDArray& x, const NDArray& dy, std::vector<int64_t> kernel_size,
                            std::vector<int64_t> stride = {}, std::vector<int64_t> padding = {0, 0},
                            bool ceil_mode = false);
/// The mean of each kernel_size window of x [N, C, H, W]; with count_include_pad the divisor
/// is the whole window clipped to the padded input (as in PyTorch and MXNet), else the taps
/// inside x. ceil_mode as in max_pool2d; an empty window gives 0 (as in MXNet).
NDArray avg_pool2d(const NDArray& x, std::vector<int64_t> kernel_size,
                   std::vector<int64_t> stride = {}, std::vector<int64_t> padding = {0, 0},
                   bool count_include_pad = true, bool ceil_mode = false);
/// The input gradient of avg_pool2d for an input of spatial size input_size.
NDArray avg_pool2d_backward(const NDArray& dy, std::vector<int64_t> input_size,
                            std::vector<int64_t> kernel_size, std::vector<int64_t> stride = {},
                            std::vector<int64_t> padding = {0, 0}, bool count_include_pad = true,
                            bool ceil_mode = false);

/// Batch normalisation over channel axis `axis` of x: (x - mean) / sqrt(var + eps) * gamma +
/// beta. In training, mean and (biased) variance of the batch, and running_mean and
/// running_var are updated in place: running = momentum * running + (1 - momentum) * batch
/// (unbiased variance, as PyTorch; Gluon's momentum convention, default 0.9). In inference, the
/// running statistics. gamma, beta and the running arrays have shape [channels].
NDArray batch_norm(const NDArray& x, const NDArray& gamma, const NDArray& beta,
                   const NDArray& running_mean, const NDArray& running_var, bool training,
                   double momentum = 0.9, double eps = 1e-5, int64_t axis = 1);
/// {dx, dgamma, dbeta} of batch_norm from dy and the gradients dmean, dvar of its statistics
/// outputs; mean and var are the statistics the forward used (not differentiable again).
std::vector<NDArray> batch_norm_backward(const NDArray& x, const NDArray& gamma,
                                         const NDArray& mean, const NDArray& var, const NDArray& dy,
                                         const NDArray& dmean, const NDArray& dvar, bool training,
                                         double eps = 1e-5, int64_t axis = 1);

}  // namespace janus
