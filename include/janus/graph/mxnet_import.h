// A model's files in either format, Janus's (graph JSON + safetensors) or Apache MXNet 1.x's
// (graph JSON + .params), detected from their contents; and the rewrite of an MXNet model into
// Janus's format. SymbolBlock::imports, deploy::Predictor and `janus run` load through here.
// Layer: graph.
//
//   Symbol net = load_symbol_file("resnet-symbol.json");            // either format
//   NamedArrays params = load_params_file("resnet-0000.params");    // either format
//   convert_mxnet_model("resnet-symbol.json", "resnet-0000.params", "out/resnet");
#pragma once

#include <string>

#include "janus/graph/safetensors.h"
#include "janus/graph/symbol.h"

namespace janus::graph {

/// The graph in `path`: Janus's format (Symbol::load), or MXNet's when the JSON is laid out as
/// MXNet's (mxnet_symbol_from_json). IOError naming the path when it cannot be read; the
/// reader's FormatError when it is malformed.
Symbol load_symbol_file(const std::string& path);

/// The parameters in `path` on `device`: MXNet's .params when the file starts with MXNet's
/// magic number (load_mxnet_params), else safetensors (load_safetensors).
NamedArrays load_params_file(const std::string& path, Device device = cpu());

/// Rewrites the MXNet model `symbol_file` + `params_file` into Janus's format:
/// `out_prefix`-symbol.json and `out_prefix`-NNNN.safetensors (NNNN = `out_epoch`, 0 to 9999),
/// as Block::export_model writes them, so that Janus's loaders read them without the MXNet
/// importer; the constants that the import introduced (zero biases) are stored with the
/// parameters. FormatError when the graph is not MXNet's or either file is malformed,
/// ValueError when the parameters do not fit the graph (graph::bind_parameters' checks),
/// IOError when a file cannot be read or written.
void convert_mxnet_model(const std::string& symbol_file, const std::string& params_file,
                         const std::string& out_prefix, int out_epoch = 0);

}  // namespace janus::graph
