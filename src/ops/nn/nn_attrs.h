// The attribute structs of the neural-network operators: one per attribute list, each field
// named after the registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../typed_attrs.h"

namespace janus::ops {

/// What every convolution operator starts with (conv_attrs()).
struct ConvAttrs {
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups = 1;
  static constexpr auto fields() {
    return std::tuple{field("stride", &ConvAttrs::stride), field("padding", &ConvAttrs::padding),
                      field("dilation", &ConvAttrs::dilation), field("groups", &ConvAttrs::groups)};
  }
};

/// conv1d, conv2d and conv3d.
struct ConvolutionAttrs : ConvAttrs {
  Activation activation = Activation::kNone;  // a post-op (post_op.h): none, relu, sigmoid, tanh
  bool avg_pool_2x2 = false;  // the activated result averaged over 2x2 windows, stride 2
  static constexpr auto fields() {
    return std::tuple_cat(
        ConvAttrs::fields(),
        std::tuple{field("activation", &ConvolutionAttrs::activation, kPostOpActivations),
                   field("avg_pool_2x2", &ConvolutionAttrs::avg_pool_2x2)});
  }
  static ConvolutionAttrs from(const Attrs& attrs) { return read_attrs<ConvolutionAttrs>(attrs); }
};

struct ConvBackwardDataAttrs : ConvAttrs {
  std::vector<int64_t> input_size;  // the spatial extents of the forward input
  static constexpr auto fields() {
    return std::tuple_cat(ConvAttrs::fields(),
                          std::tuple{field("input_size", &ConvBackwardDataAttrs::input_size)});
  }
  static ConvBackwardDataAttrs from(const Attrs& attrs) {
    return read_attrs<ConvBackwardDataAttrs>(attrs);
  }
};

struct ConvBackwardWeightAttrs : ConvAttrs {
  std::vector<int64_t> kernel_size;  // the spatial extents of the weight
  static constexpr auto fields() {
    return std::tuple_cat(ConvAttrs::fields(),
                          std::tuple{field("kernel_size", &ConvBackwardWeightAttrs::kernel_size)});
  }
  static ConvBackwardWeightAttrs from(const Attrs& attrs) {
    return read_attrs<ConvBackwardWeightAttrs>(attrs);
  }
};

/// conv1d_transpose, conv2d_transpose and conv3d_transpose.
struct ConvTransposeAttrs : ConvAttrs {
  std::vector<int64_t> output_padding;  // added to one side of each output extent
  static constexpr auto fields() {
    return std::tuple_cat(ConvAttrs::fields(),
                          std::tuple{field("output_padding", &ConvTransposeAttrs::output_padding)});
  }
  static ConvTransposeAttrs from(const Attrs& attrs) {
    return read_attrs<ConvTransposeAttrs>(attrs);
  }
};

/// max_pool2d and max_pool2d_backward; what every pooling operator starts with (pool_attrs()).
struct PoolAttrs {
  std::vector<int64_t> kernel_size;
  std::vector<int64_t> stride;  // empty: the kernel size
  std::vector<int64_t> padding;
  bool ceil_mode = false;  // the output extent rounded up: a last window may pass the padding
  static constexpr auto fields() {
    return std::tuple{field("kernel_size", &PoolAttrs::kernel_size),
                      field("stride", &PoolAttrs::stride), field("padding", &PoolAttrs::padding),
                      field("ceil_mode", &PoolAttrs::ceil_mode)};
  }
  static PoolAttrs from(const Attrs& attrs) { return read_attrs<PoolAttrs>(attrs); }
};

struct AvgPoolAttrs : PoolAttrs {
  bool count_include_pad = true;
  static constexpr auto fields() {
    return std::tuple_cat(PoolAttrs::fields(),
                          std::tuple{field("count_include_pad", &AvgPoolAttrs::count_include_pad)});
  }
  static AvgPoolAttrs from(const Attrs& attrs) { return read_attrs<AvgPoolAttrs>(attrs); }
};

struct AvgPoolBackwardAttrs : AvgPoolAttrs {
  std::vector<int64_t> input_size;  // H and W of the forward input
  static constexpr auto fields() {
    return std::tuple_cat(AvgPoolAttrs::fields(),
                          std::tuple{field("input_size", &AvgPoolBackwardAttrs::input_size)});
  }
  static AvgPoolBackwardAttrs from(const Attrs& attrs) {
    return read_attrs<AvgPoolBackwardAttrs>(attrs);
  }
};

struct FullyConnectedAttrs {
  Activation activation = Activation::kNone;  // a post-op (post_op.h): none, relu, sigmoid, tanh
  static constexpr auto fields() {
    return std::tuple{field("activation", &FullyConnectedAttrs::activation, kPostOpActivations)};
  }
  static FullyConnectedAttrs from(const Attrs& attrs) {
    return read_attrs<FullyConnectedAttrs>(attrs);
  }
};

/// rnn: the recurrence (MXNet's RNN operator, its attribute names).
struct RnnAttrs {
  std::string mode = "lstm";  // "rnn_relu", "rnn_tanh", "lstm" or "gru"
  int64_t state_size = 0;     // H
  int64_t num_layers = 1;
  bool bidirectional = false;
  static constexpr auto fields() {
    return std::tuple{field("mode", &RnnAttrs::mode), field("state_size", &RnnAttrs::state_size),
                      field("num_layers", &RnnAttrs::num_layers),
                      field("bidirectional", &RnnAttrs::bidirectional)};
  }
  static RnnAttrs from(const Attrs& attrs) { return read_attrs<RnnAttrs>(attrs); }
};

struct BatchNormAttrs {
  double eps = 1e-5;
  double momentum = 0.9;
  bool training = false;
  int64_t axis = 1;
  static constexpr auto fields() {
    return std::tuple{
        field("eps", &BatchNormAttrs::eps), field("momentum", &BatchNormAttrs::momentum),
        field("training", &BatchNormAttrs::training), field("axis", &BatchNormAttrs::axis)};
  }
  static BatchNormAttrs from(const Attrs& attrs) { return read_attrs<BatchNormAttrs>(attrs); }
};

struct BatchNormBackwardAttrs {
  double eps = 1e-5;
  bool training = false;
  int64_t axis = 1;
  static constexpr auto fields() {
    return std::tuple{field("eps", &BatchNormBackwardAttrs::eps),
                      field("training", &BatchNormBackwardAttrs::training),
                      field("axis", &BatchNormBackwardAttrs::axis)};
  }
  static BatchNormBackwardAttrs from(const Attrs& attrs) {
    return read_attrs<BatchNormBackwardAttrs>(attrs);
  }
};

struct DropoutAttrs {
  double p = 0.5;
  bool training = true;
  static constexpr auto fields() {
    return std::tuple{field("p", &DropoutAttrs::p), field("training", &DropoutAttrs::training)};
  }
  static DropoutAttrs from(const Attrs& attrs) { return read_attrs<DropoutAttrs>(attrs); }
};

struct EmbeddingBackwardAttrs {
  int64_t num_embeddings = 0;
  static constexpr auto fields() {
    return std::tuple{field("num_embeddings", &EmbeddingBackwardAttrs::num_embeddings)};
  }
  static EmbeddingBackwardAttrs from(const Attrs& attrs) {
    return read_attrs<EmbeddingBackwardAttrs>(attrs);
  }
};

/// layer_norm and layer_norm_backward.
struct LayerNormAttrs {
  double eps = 1e-5;
  static constexpr auto fields() { return std::tuple{field("eps", &LayerNormAttrs::eps)}; }
  static LayerNormAttrs from(const Attrs& attrs) { return read_attrs<LayerNormAttrs>(attrs); }
};

/// softmax and log_softmax.
struct SoftmaxAttrs {
  int64_t axis = -1;
  static constexpr auto fields() { return std::tuple{field("axis", &SoftmaxAttrs::axis)}; }
  static SoftmaxAttrs from(const Attrs& attrs) { return read_attrs<SoftmaxAttrs>(attrs); }
};

struct OneHotAttrs {
  int64_t depth = 0;
  DType dtype = DType::kFloat32;
  static constexpr auto fields() {
    return std::tuple{field("depth", &OneHotAttrs::depth), field("dtype", &OneHotAttrs::dtype)};
  }
  static OneHotAttrs from(const Attrs& attrs) { return read_attrs<OneHotAttrs>(attrs); }
};

}  // namespace janus::ops
