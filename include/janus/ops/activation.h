// The named activations: one enum for the layers that apply them by name (Dense, Conv2D,
// Activation) and for the operators that fuse one as a post-op (fully_connected, conv2d).
// Graph files and layer arguments keep the names. Layer: ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace janus::ops {

enum class Activation : uint8_t { kNone, kRelu, kSigmoid, kTanh, kSoftrelu, kGelu, kLeaky };
inline constexpr size_t kActivationCount = 7;

/// Every activation, in enum order.
inline constexpr Activation kAllActivations[] = {
    Activation::kNone,     Activation::kRelu, Activation::kSigmoid, Activation::kTanh,
    Activation::kSoftrelu, Activation::kGelu, Activation::kLeaky};
/// What fully_connected and conv{1,2,3}d apply to their result in the same call, with the
/// function of the operator of that name (bit for bit).
inline constexpr Activation kPostOpActivations[] = {Activation::kNone, Activation::kRelu,
                                                    Activation::kSigmoid, Activation::kTanh};

/// The name of `a` in attributes, graph files and layer arguments: "" for kNone, "relu",
/// "sigmoid", "tanh", "softrelu" (softplus), "gelu", "leaky" (slope 0.01).
std::string_view activation_name(Activation a);

/// The activation called `name`, which must be one of `allowed` (empty: any). Otherwise throws
/// ValueError naming `op`, `attr`, the value and the allowed names, e.g.
/// "conv2d: attribute 'activation' is 'gelu', expected one of '' (none), 'relu', 'sigmoid',
/// 'tanh'".
Activation parse_activation(std::string_view name, std::string_view op, std::string_view attr,
                            std::span<const Activation> allowed = {});

}  // namespace janus::ops
