// Apache MXNet 1.x's `.params` file: the binary NDArray list that `mx.nd.save`,
// `HybridBlock.export` and `mx.model.save_checkpoint` write. Layer: graph.
//
//   NamedArrays p = load_mxnet_params("resnet-0000.params");   // names without "arg:"/"aux:"
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "janus/graph/safetensors.h"

namespace janus::graph {

/// True when `bytes` starts with the NDArray-list magic number of MXNet's .params files.
bool is_mxnet_params(std::span<const char> bytes);

/// The arrays of an MXNet .params file held in `bytes` (read from `source`, for messages), in
/// file order, on `device`. Reads the dense NDArray layouts of every MXNet 1.x: the legacy
/// ones (no magic number, or magic 0xF993FAC8), MXNet 1.x's (0xF993FAC9) and numpy mode's
/// (0xF993FACA, where a dimension of -1 means unknown). The "arg:" and "aux:" prefixes of
/// Gluon's and Module's names are dropped. A malformed file (truncated, a wrong magic number, a
/// sparse array, an array without data, an unknown dtype, a name count that does not match, two
/// arrays of one name) is a FormatError naming `source` and the byte offset; never a crash, and
/// nothing is allocated before the file is known to hold its bytes.
NamedArrays parse_mxnet_params(std::span<const char> bytes, std::string_view source,
                               Device device = cpu());

/// parse_mxnet_params of the file `path`; IOError naming it when it cannot be read.
NamedArrays load_mxnet_params(const std::string& path, Device device = cpu());

}  // namespace janus::graph
