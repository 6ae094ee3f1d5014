// Operator API of the optimizer-update family (see ops.h for the conventions). Layer: ops.
//
// Each function pushes one in-place update and returns at once: the weight and the optimizer
// state are the operator's mutable inputs, so the engine orders the update as a write of them
// after every pending read (the forward and backward that use the weight) and before any later
// use; nothing is allocated. The gradient the step uses is
//   g = clip(rescale_grad * grad, -clip_gradient, clip_gradient) + wd * weight
// with the clipping only when clip_gradient > 0 (MXNet's convention). All arrays share the
// weight's shape and dtype (float32 or float64); a mismatch is a ShapeError or TypeError naming
// the operator and the input.
#pragma once

#include <cstdint>

#include "janus/core/ndarray.h"

namespace janus {

/// weight -= lr * g (MXNet's sgd_update; PyTorch's SGD without momentum).
void sgd_update(const NDArray& weight, const NDArray& grad, double lr, double wd = 0.0,
                double rescale_grad = 1.0, double clip_gradient = -1.0);

/// mom = momentum * mom - lr * g; weight += mom (MXNet's sgd_mom_update). For a constant lr this
/// is PyTorch's SGD with momentum (dampening 0, no Nesterov), whose buffer is -mom / lr.
void sgd_mom_update(const NDArray& weight, const NDArray& grad, const NDArray& mom, double lr,
                    double momentum = 0.0, double wd = 0.0, double rescale_grad = 1.0,
                    double clip_gradient = -1.0);

/// mean = beta1 * mean + (1 - beta1) * g; var = beta2 * var + (1 - beta2) * g^2;
/// weight -= lr * mean_hat / (sqrt(var_hat) + epsilon), with mean_hat = mean / (1 - beta1^t) and
/// var_hat = var / (1 - beta2^t) for step t >= 1 (PyTorch's Adam; weight decay as L2, not
/// AdamW). t = 0 skips the bias correction (MXNet's adam_update operator).
void adam_update(const NDArray& weight, const NDArray& grad, const NDArray& mean,
                 const NDArray& var, double lr, double beta1 = 0.9, double beta2 = 0.999,
                 double epsilon = 1e-8, double wd = 0.0, double rescale_grad = 1.0,
                 double clip_gradient = -1.0, int64_t t = 1);

}  // namespace janus
