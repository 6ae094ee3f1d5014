// `janus convert PREFIX --to onnx FILE.onnx` and `janus convert PREFIX --to janus OUT_PREFIX`:
// loads a model through the loaders of exported models (deploy::Predictor for the graph) and
// writes it as ONNX (interchange/) or in
// Janus's own format. Part of the janus program (tools/).
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
  /// The graph's arguments that are the model's inputs; the others are parameters.
  std::vector<std::string> inputs = {"data"};
  /// --to onnx: the shape of the (one) input; empty: the shape that the graph records.
  std::vector<int64_t> shape;
};

/// Checks the options (ValueError naming the option), converts and prints what it wrote. The
/// parameters file is PREFIX-NNNN.safetensors, or else PREFIX-NNNN.params (Apache MXNet's);
/// IOError naming the prefix's folder when there is none. Errors of the files are the loaders'
/// (FormatError / IOError naming the file); an operator that ONNX cannot express is a
/// NotImplementedError naming the node (interchange::export_onnx).
void convert_model(const ConvertOptions& options, std::ostream& out);

}  // namespace janus::tools
