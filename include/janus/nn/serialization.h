// A block's parameters in the safetensors format (janus/graph/safetensors.h); the optimizer
// states of optim::Trainer use the same format. Layer: nn.
//
//   nn::save_parameters(net, "net.safetensors");
//   auto net2 = make_net();                                    // same structure
//   nn::load_parameters(*net2, "net.safetensors");             // shapes of deferred parameters
//                                                              // come from the file
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "janus/core/device.h"
#include "janus/core/ndarray.h"
#include "janus/graph/safetensors.h"

namespace janus::nn {

class Block;

using graph::load_safetensors;
using graph::Metadata;
using graph::NamedArrays;
using graph::save_safetensors;

/// Saves every parameter of `block` under its structural name ("0.weight"), as
/// Block::collect_params gives them. ValueError naming the parameter when one is not
/// initialised (deferred parameters need a forward pass first).
void save_parameters(const Block& block, const std::string& path);

/// Loads the parameters of `block` from a file written by save_parameters. A parameter whose
/// shape is not known yet (deferred) takes the file's shape; values are converted to the
/// parameter's dtype. Parameters missing from the file are a ValueError naming them unless
/// `allow_missing` (they keep their values); names in the file that the block does not have are
/// a ValueError naming them unless `ignore_extra`; shapes that differ are a ShapeError naming
/// each parameter with both shapes. Nothing is changed when an error is raised.
/// `device`: where parameters that are not initialised yet are created (default: the device
/// given to initialize(), else cpu()); an initialised parameter on another device is a
/// DeviceError.
void load_parameters(Block& block, const std::string& path,
                     std::optional<Device> device = std::nullopt, bool allow_missing = false,
                     bool ignore_extra = false);

}  // namespace janus::nn
