// `janus convert PREFIX --to onnx FILE.onnx` and `janus convert PREFIX --to janus OUT_PREFIX`:
// reads an exported model, Janus's or Apache MXNet 1.x's (graph::load_symbol_file and
// load_params_file detect the format), and writes it as ONNX (interchange/) or in Janus's own
// format (graph::convert_mxnet_model for MXNet's). Part of the janus program (tools/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace janus::tools {

struct ConvertOptions {
  std::string prefix;
  std::optional<int> epoch;  // absent: the highest-numbered parameters file
  std::string to;            // "onnx" or "janus"
  std::string output;        // FILE.onnx, or OUT_PREFIX
  /// The graph's arguments that are the model's inputs; the others are parameters. An MXNet
  /// model converted to Janus's format takes as inputs the arguments its parameters lack.
  std::vector<std::string> inputs = {"data"};
  /// --to onnx: the shape of the (one) input; empty: the shape that the graph records.
  std::vector<int64_t> shape;
  /// --to onnx: every extent fixed; else axis 0 (the batch) is symbolic
  /// (interchange::OnnxExportOptions::dynamic_batch).
  bool fixed_batch = false;
};

/// Checks the options (ValueError naming the option), converts and prints what it wrote. The
/// parameters file is params_file_of(prefix, epoch) (run_model.h); the output keeps its epoch.
/// Errors of the files are the loaders' (FormatError / IOError naming the file); an operator that
/// ONNX cannot express is a NotImplementedError naming the node (interchange::export_onnx).
void convert_model(const ConvertOptions& options, std::ostream& out);

}  // namespace janus::tools
