// Arrays in files: the safetensors format (https://huggingface.co/docs/safetensors), used for
// parameters (nn::save_parameters), optimizer states and exported graphs. Layer: graph.
//
// File layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<value>", ...}}
// (padded with spaces to a multiple of 8), then the arrays' raw little-endian bytes, row-major;
// offsets count from the first byte after the header.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "janus/core/device.h"
#include "janus/core/ndarray.h"

namespace janus::graph {

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

}  // namespace janus::graph
