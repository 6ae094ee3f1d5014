// Apache MXNet 1.x's graph file (PREFIX-symbol.json, written by HybridBlock.export,
// Symbol.save and mx.model.save_checkpoint) read into Janus's IR, in both flavours that MXNet
// 1.9 writes: the legacy operators and numpy mode's (`_npi_*`, `_np_*`, `_npx_*`). Layer: graph.
//
//   Symbol net = mxnet_symbol_from_json(text, "resnet-symbol.json");
#pragma once

#include <string_view>

#include "janus/graph/symbol.h"

namespace janus::graph {

/// True when `text` is a JSON object laid out as MXNet's graphs are ("nodes" and "heads", no
/// Janus "format" field); false for anything else, Janus's own graphs included.
bool is_mxnet_json(std::string_view text);

/// The MXNet graph `text` (read from `source`, for messages) as a Janus Symbol with the graph's
/// heads as outputs and its variables (by their MXNet names) as arguments. Each MXNet operator
/// becomes the Janus operators that compute it at inference: Dropout is the identity,
/// BatchNorm uses its moving statistics, SoftmaxOutput's label input is dropped. A malformed
/// file, or an operator or attribute value that the importer does not map (listed in
/// docs/design/interchange.md), is a FormatError naming `source`, the node and the operator;
/// nothing is skipped silently.
Symbol mxnet_symbol_from_json(std::string_view text, std::string_view source = "<string>");

}  // namespace janus::graph
