// Arrays in files: the safetensors format (https://huggingface.co/docs/safetensors) and a
// block's parameters in it. The optimizer states of optim::Trainer use the same format.
// Layer: nn.
//
//   nn::save_parameters(net, "net.safetensors");
//   auto net2 = make_net();                                    // same structure
//   nn::load_parameters(*net2, "net.safetensors");             // shapes of deferred parameters
//                                                              // come from the file
//
// File layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<value>", ...}}
// (padded with spaces to a multiple of 8), then the arrays' raw little-endian bytes, row-major;
// offsets count from the first byte after the header.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "janus/core/device.h"
#include "janus/core/ndarray.h"

namespace janus::nn {

class Block;

/// Named arrays in file order.
using NamedArrays = std::vector<std::pair<std::string, NDArray>>;
/// The free-form string map stored under "__metadata__".
using Metadata = std::map<std::string, std::string>;

/// Writes `arrays` (waiting for each: a blocker) and `metadata` to `path` in the safetensors
/// layout. The file is written beside `path` and renamed into place, so a failed save leaves
/// any earlier file intact. Names must be unique, non-empty and not "__metadata__"
/// (ValueError). dtypes map to F32, F64, F16, BF16, I32, I64, U8 and BOOL. IOError naming the
/// path when it cannot be written.
void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const Metadata& metadata = {});

/// Reads a safetensors file: the arrays in the order of their data, on `device`, and its
/// metadata into `*metadata` when given. A missing or unreadable file is an IOError naming the
/// path; a malformed one (too short, header length past the end, bad JSON, a wrong field, an
/// unknown dtype, offsets out of range or not matching dtype × shape, overlapping data, bytes
/// that no array covers) is a FormatError naming the path and what is wrong. Never crashes.
NamedArrays load_safetensors(const std::string& path, Metadata* metadata = nullptr,
                             Device device = cpu());

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
