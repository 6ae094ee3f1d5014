// The built-in layers (Gluon's nn.Dense, nn.Conv2D, ...). Each checks its input and names
// itself, the shape it got and what it expected. Layer: nn.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "janus/nn/block.h"
#include "janus/ops/activation.h"

namespace janus::nn {

/// Applies an activation (kNone: x itself).
NDArray activate(const NDArray& x, ops::Activation activation);
/// Applies a named activation: "relu", "sigmoid", "tanh", "softrelu" (softplus), "gelu",
/// "leaky" (slope 0.01), or "" for none. Unknown names are a ValueError listing the valid ones.
NDArray activate(const NDArray& x, const std::string& activation);
void check_activation(const std::string& activation);

/// y = activation(x · weightᵀ + bias). weight [units, in_units]; in_units 0 = inferred from the
/// first input. With `flatten`, inputs of more than 2 dimensions are flattened to [batch, -1].
class Dense : public Block {
 public:
  explicit Dense(int64_t units, std::string activation = "", bool use_bias = true,
                 bool flatten = true, int64_t in_units = 0, InitializerPtr weight_init = nullptr,
                 InitializerPtr bias_init = Zero());
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }

 private:
  int64_t units_;
  ops::Activation activation_;
  bool flatten_;
  ParameterPtr weight_, bias_;
};

/// Where a convolution's or a pool's channel axis lies: right after the batch axis (MXNet's NCW,
/// NCHW and NCDHW layouts, the default) or last (NWC, NHWC, NDHWC). A channels-last layer
/// computes channels first between two transposes. Its weight keeps MXNet's channels-last
/// order too: [channels, k..., in_channels / groups] for a convolution, [in_channels, k...,
/// channels / groups] for a transposed one.
enum class ChannelAxis { kFirst, kLast };

/// Convolution over [N, C, spatial...] with 1 to 3 spatial axes, or its transpose (MXNet's
/// Deconvolution): the layer behind Conv1D, Conv2D, Conv3D and their Transpose variants, which
/// only fix the number of axes and the direction. Weight [channels, in_channels / groups, k...]
/// (convolution) or [in_channels, channels / groups, k...] (transpose); in_channels 0 = inferred
/// from the first input. kernel_size, strides, padding, output_padding and dilation take one
/// value per spatial axis or one for all.
class Conv : public Block {
 public:
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& weight() const { return weight_; }
  const ParameterPtr& bias() const { return bias_; }

 protected:
  Conv(std::string_view kind, int dims, bool transpose, int64_t channels,
       std::vector<int64_t> kernel_size, std::vector<int64_t> strides, std::vector<int64_t> padding,
       std::vector<int64_t> output_padding, std::vector<int64_t> dilation, int64_t groups,
       std::string activation, bool use_bias, int64_t in_channels, InitializerPtr weight_init,
       InitializerPtr bias_init, ChannelAxis channel_axis);

 private:
  // The weight's shape for `in_channels` input channels.
  Shape weight_shape(int64_t in_channels) const;
  // The input channels that the weight expects (0 while deferred).
  int64_t in_channels() const;

  std::string kind_;  // the class name, for errors and describe()
  int dims_;
  bool transpose_;
  int64_t channels_;
  std::vector<int64_t> kernel_, strides_, padding_, output_padding_, dilation_;
  int64_t groups_;
  ops::Activation activation_;
  ChannelAxis channel_axis_;
  ParameterPtr weight_, bias_;
};

/// 1-D convolution over [N, C, W]; weight [channels, in_channels / groups, kw].
class Conv1D : public Conv {
 public:
  Conv1D(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides = {1},
         std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
         int64_t groups = 1, std::string activation = "", bool use_bias = true,
         int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
         InitializerPtr bias_init = Zero(), ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// 2-D convolution over [N, C, H, W]: weight [channels, in_channels / groups, kh, kw].
class Conv2D : public Conv {
 public:
  Conv2D(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides = {1},
         std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
         int64_t groups = 1, std::string activation = "", bool use_bias = true,
         int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
         InitializerPtr bias_init = Zero(), ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// 3-D convolution over [N, C, D, H, W]: weight [channels, in_channels / groups, kd, kh, kw].
class Conv3D : public Conv {
 public:
  Conv3D(int64_t channels, std::vector<int64_t> kernel_size, std::vector<int64_t> strides = {1},
         std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1},
         int64_t groups = 1, std::string activation = "", bool use_bias = true,
         int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
         InitializerPtr bias_init = Zero(), ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Transposed 1-D convolution over [N, C, W]: weight [in_channels, channels / groups, kw].
class Conv1DTranspose : public Conv {
 public:
  Conv1DTranspose(int64_t channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> strides = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, std::vector<int64_t> dilation = {1},
                  int64_t groups = 1, std::string activation = "", bool use_bias = true,
                  int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
                  InitializerPtr bias_init = Zero(),
                  ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Transposed 2-D convolution over [N, C, H, W]: weight [in_channels, channels / groups, kh,
/// kw].
class Conv2DTranspose : public Conv {
 public:
  Conv2DTranspose(int64_t channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> strides = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, std::vector<int64_t> dilation = {1},
                  int64_t groups = 1, std::string activation = "", bool use_bias = true,
                  int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
                  InitializerPtr bias_init = Zero(),
                  ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Transposed 3-D convolution over [N, C, D, H, W]: weight [in_channels, channels / groups,
/// kd, kh, kw].
class Conv3DTranspose : public Conv {
 public:
  Conv3DTranspose(int64_t channels, std::vector<int64_t> kernel_size,
                  std::vector<int64_t> strides = {1}, std::vector<int64_t> padding = {0},
                  std::vector<int64_t> output_padding = {0}, std::vector<int64_t> dilation = {1},
                  int64_t groups = 1, std::string activation = "", bool use_bias = true,
                  int64_t in_channels = 0, InitializerPtr weight_init = nullptr,
                  InitializerPtr bias_init = Zero(),
                  ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Max pooling over [N, C, H, W]; strides default to the pool size.
class MaxPool2D : public Block {
 public:
  /// ceil_mode rounds the output extent up (MXNet's pooling_convention 'full').
  explicit MaxPool2D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     ChannelAxis channel_axis = ChannelAxis::kFirst);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  std::vector<int64_t> pool_, strides_, padding_;
  bool ceil_mode_;
  ChannelAxis channel_axis_;
};

/// Average pooling over [N, C, H, W]; strides default to the pool size.
class AvgPool2D : public Block {
 public:
  explicit AvgPool2D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool count_include_pad = true,
                     bool ceil_mode = false, ChannelAxis channel_axis = ChannelAxis::kFirst);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  std::vector<int64_t> pool_, strides_, padding_;
  bool count_include_pad_;
  bool ceil_mode_;
  ChannelAxis channel_axis_;
};

/// The mean over H and W of [N, C, H, W]: [N, C, 1, 1].
class GlobalAvgPool2D : public Block {
 public:
  explicit GlobalAvgPool2D(ChannelAxis channel_axis = ChannelAxis::kFirst);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override { return "GlobalAvgPool2D"; }

 private:
  ChannelAxis channel_axis_;
};

/// Batch normalisation over `axis` (channels). gamma, beta, running_mean and running_var
/// [channels]; in_channels 0 = inferred. Training mode (autograd::is_training()) uses and
/// updates batch statistics (momentum as in Gluon: 0.9 keeps 90% of the old value), unless
/// use_global_stats: then training normalises by the running statistics too and leaves them
/// unchanged (MXNet's use_global_stats; gamma and beta still learn), a per-channel scale and
/// shift.
class BatchNorm : public Block {
 public:
  explicit BatchNorm(int64_t axis = 1, double momentum = 0.9, double epsilon = 1e-5,
                     bool center = true, bool scale = true, int64_t in_channels = 0,
                     bool use_global_stats = false);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& gamma() const { return gamma_; }
  const ParameterPtr& beta() const { return beta_; }
  const ParameterPtr& running_mean() const { return running_mean_; }
  const ParameterPtr& running_var() const { return running_var_; }
  bool use_global_stats() const { return use_global_stats_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

 protected:
  /// The scale that normalises on `device`: gamma, or ones with scale = false (MXNet's
  /// fix_gamma, which ignores gamma's value: a model file may hold any there).
  NDArray gamma_or_ones(Device device) const;

 private:
  int64_t axis_;
  double momentum_, epsilon_;
  bool use_global_stats_;
  bool scale_;
  ParameterPtr gamma_, beta_, running_mean_, running_var_;
};

/// Zeroes elements with probability `rate` in training mode (scaling the rest by 1/(1-rate));
/// the identity otherwise.
class Dropout : public Block {
 public:
  explicit Dropout(double rate);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  double rate_;
};

/// [N, ...] -> [N, prod(...)].
class Flatten : public Block {
 public:
  Flatten();
  NDArray forward(const NDArray& x) override;
  std::string describe() const override { return "Flatten"; }
};

/// An activation as a layer (see activate()).
class Activation : public Block {
 public:
  explicit Activation(std::string activation);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  ops::Activation activation_;
};

/// Rows of weight [input_dim, output_dim] picked by integer indices.
class Embedding : public Block {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, InitializerPtr weight_init = nullptr);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& weight() const { return weight_; }

 private:
  int64_t input_dim_, output_dim_;
  ParameterPtr weight_;
};

/// Layer normalisation over one axis (MXNet's `axis`, the last by default; negative counts from
/// the end), with gamma and beta of that axis's size; in_channels 0 = inferred.
class LayerNorm : public Block {
 public:
  explicit LayerNorm(double epsilon = 1e-5, int64_t in_channels = 0, int64_t axis = -1);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  double epsilon_;
  int64_t axis_;
  ParameterPtr gamma_, beta_;
};

/// Group normalisation (MXNet 1.9's GroupNorm): the channels of axis 1 of an [N, C, ...] input
/// split into `num_groups` groups of C / num_groups; each sample's group is normalised over its
/// channels and spatial positions, then scaled and shifted by gamma and beta [num_groups] (one
/// per group, as MXNet 1.x). Composed of registered operators, so it records and traces.
class GroupNorm : public Block {
 public:
  explicit GroupNorm(int64_t num_groups = 1, double epsilon = 1e-5, bool center = true,
                     bool scale = true, InitializerPtr beta_init = Zero(),
                     InitializerPtr gamma_init = One());
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& gamma() const { return gamma_; }
  const ParameterPtr& beta() const { return beta_; }

 private:
  int64_t num_groups_;
  double epsilon_;
  ParameterPtr gamma_, beta_;
};

/// Instance normalisation (MXNet 1.9's InstanceNorm): each sample's channel (`axis`) normalised
/// over every other axis but the batch axis 0, then scaled and shifted by gamma and beta
/// [channels]; in_channels 0 = inferred. MXNet's default leaves gamma fixed (scale = false).
class InstanceNorm : public Block {
 public:
  explicit InstanceNorm(int64_t axis = 1, double epsilon = 1e-5, bool center = true,
                        bool scale = false, InitializerPtr beta_init = Zero(),
                        InitializerPtr gamma_init = One(), int64_t in_channels = 0);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  const ParameterPtr& gamma() const { return gamma_; }
  const ParameterPtr& beta() const { return beta_; }

 private:
  int64_t axis_;
  double epsilon_;
  ParameterPtr gamma_, beta_;
};

/// Max or average pooling over [N, C, spatial...] with 1 or 3 spatial axes (2 is MaxPool2D and
/// AvgPool2D): the layer behind MaxPool1D, AvgPool1D, MaxPool3D and AvgPool3D. pool_size,
/// strides (empty: the pool size) and padding take one value per spatial axis or one for all;
/// ceil_mode and count_include_pad as in max_pool2d and avg_pool2d. Composed of the 2-D
/// operators: 1-D pools [N, C, 1, W]; 3-D pools, whose box is separable (the maximum, or the
/// sum and each axis' count of the divisor, factor over the axes), pool (H, W) with D folded
/// into the channels, then D as a 2-D pool of kernel (kd, 1) over [N, C, D, H' * W'].
class Pooling : public Block {
 public:
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 protected:
  Pooling(std::string_view kind, int dims, bool max, std::vector<int64_t> pool_size,
          std::vector<int64_t> strides, std::vector<int64_t> padding, bool ceil_mode,
          bool count_include_pad, ChannelAxis channel_axis);

 private:
  std::string kind_;  // the class name, for errors and describe()
  int dims_;
  bool max_;
  std::vector<int64_t> pool_, strides_, padding_;
  bool ceil_mode_, count_include_pad_;
  ChannelAxis channel_axis_;
};

/// Max pooling over [N, C, W].
class MaxPool1D : public Pooling {
 public:
  explicit MaxPool1D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Max pooling over [N, C, D, H, W].
class MaxPool3D : public Pooling {
 public:
  explicit MaxPool3D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Average pooling over [N, C, W].
class AvgPool1D : public Pooling {
 public:
  explicit AvgPool1D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     bool count_include_pad = true, ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// Average pooling over [N, C, D, H, W].
class AvgPool3D : public Pooling {
 public:
  explicit AvgPool3D(std::vector<int64_t> pool_size = {2}, std::vector<int64_t> strides = {},
                     std::vector<int64_t> padding = {0}, bool ceil_mode = false,
                     bool count_include_pad = true, ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// The maximum or mean of each channel over its spatial axes (1 or 3; the 2-D ones are
/// GlobalAvgPool2D and Python's GlobalMaxPool2D): [N, C, 1...], a reduction.
class GlobalPooling : public Block {
 public:
  NDArray forward(const NDArray& x) override;
  std::string describe() const override { return kind_; }

 protected:
  GlobalPooling(std::string_view kind, int dims, bool max, ChannelAxis channel_axis);

 private:
  std::string kind_;
  int dims_;
  bool max_;
  ChannelAxis channel_axis_;
};

class GlobalMaxPool1D : public GlobalPooling {
 public:
  explicit GlobalMaxPool1D(ChannelAxis channel_axis = ChannelAxis::kFirst);
};
class GlobalMaxPool3D : public GlobalPooling {
 public:
  explicit GlobalMaxPool3D(ChannelAxis channel_axis = ChannelAxis::kFirst);
};
class GlobalAvgPool1D : public GlobalPooling {
 public:
  explicit GlobalAvgPool1D(ChannelAxis channel_axis = ChannelAxis::kFirst);
};
class GlobalAvgPool3D : public GlobalPooling {
 public:
  explicit GlobalAvgPool3D(ChannelAxis channel_axis = ChannelAxis::kFirst);
};

/// [N, C, H, W] padded on H and W with its own reflection (the edge row or column not
/// repeated: [a b c] padded by 2 is [c b a b c b a]), as MXNet's pad mode 'reflect'.
/// padding = (top, bottom, left, right); each must be below the extent it reflects. Composed of
/// one-wide slices and concat, so the gradient folds back onto the reflected elements.
class ReflectionPad2D : public Block {
 public:
  explicit ReflectionPad2D(std::vector<int64_t> padding);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 private:
  std::vector<int64_t> padding_;  // top, bottom, left, right
};

/// SELU: scale * x for x > 0, scale * alpha * (exp(x) - 1) otherwise, with the constants of
/// Klambauer et al. (2017) that MXNet uses.
class SELU : public Block {
 public:
  SELU();
  NDArray forward(const NDArray& x) override;
  std::string describe() const override { return "SELU"; }
};

/// relu(BatchNorm(x)): MXNet's BatchNormReLU (BatchNorm with act_type 'relu').
class BatchNormReLU : public BatchNorm {
 public:
  explicit BatchNormReLU(int64_t axis = 1, double momentum = 0.9, double epsilon = 1e-5,
                         bool center = true, bool scale = true, int64_t in_channels = 0,
                         bool use_global_stats = false);
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
};

namespace detail {
struct SyncBatchNormStep;
}

/// MXNet's contrib SyncBatchNorm: BatchNorm over axis 1 whose training statistics are those of
/// the whole batch across the devices of a data-parallel step (its parameters' replicas). Each
/// device's call (`net(x_k)`, one per device and step, in any order) pushes its partial sums
/// and returns its output at once; the output is written when the last device has called, so a
/// wait on it before then fails (EngineError: the step is abandoned) rather than hang. Backward
/// exchanges the sums of dy and dy * xhat the same way; each replica's gamma and beta gradients
/// are its own slice's share, which the Trainer's allreduce sums. Running statistics are
/// updated identically on every replica. `num_devices` (MXNet's argument; 0: the replicas'
/// count) must equal the number of replicas in a training call. Inference, use_global_stats and
/// a single device are BatchNorm. Training across devices needs the threaded engine and runs
/// imperatively only (a hybridized block refuses it; see docs/design/sync_batch_norm.md).
class SyncBatchNorm : public BatchNorm {
 public:
  explicit SyncBatchNorm(int64_t in_channels = 0, int64_t num_devices = 0, double momentum = 0.9,
                         double epsilon = 1e-5, bool center = true, bool scale = true,
                         bool use_global_stats = false);
  ~SyncBatchNorm() override;
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;
  int64_t num_devices() const { return num_devices_; }

 private:
  int64_t num_devices_;
  std::mutex mu_;                                    // guards step_
  std::shared_ptr<detail::SyncBatchNormStep> step_;  // the step whose calls are arriving
};

/// Pixel shuffle (MXNet's contrib PixelShuffle1D/2D/3D) over [N, C * f1 * ... * fd, spatial...]
/// with d spatial axes: [N, C, s1 * f1, ..., sd * fd], output element (c, i1 * f1 + j1, ...)
/// being input channel c * (f1 * ... * fd) + (j1 * f2 + j2) * ... at (i1, ...). A reshape, a
/// transpose and a reshape.
class PixelShuffle : public Block {
 public:
  NDArray forward(const NDArray& x) override;
  std::string describe() const override;

 protected:
  /// factors: one per spatial axis or one for all.
  PixelShuffle(int dims, std::vector<int64_t> factors);

 private:
  std::vector<int64_t> factors_;
};

class PixelShuffle1D : public PixelShuffle {
 public:
  explicit PixelShuffle1D(std::vector<int64_t> factor) : PixelShuffle(1, std::move(factor)) {}
};
class PixelShuffle2D : public PixelShuffle {
 public:
  explicit PixelShuffle2D(std::vector<int64_t> factors) : PixelShuffle(2, std::move(factors)) {}
};
class PixelShuffle3D : public PixelShuffle {
 public:
  explicit PixelShuffle3D(std::vector<int64_t> factors) : PixelShuffle(3, std::move(factors)) {}
};

}  // namespace janus::nn
