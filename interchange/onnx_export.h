// ONNX export: an exported Janus model (a graph and its parameters) as an ONNX model, written
// through the ONNX project's own protobuf classes (Debian's libonnx-dev). Part of interchange/
// (below tools/; uses the graph, ops and core layers of libjanus). docs/design/interchange.md lists
// how each operator maps.
//
//   const graph::Symbol net = graph::Symbol::load("lenet-symbol.json");
//   const graph::NamedArrays params = graph::load_safetensors("lenet-0010.safetensors");
//   interchange::save_onnx("lenet.onnx", net, params);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "janus/core/shape.h"
#include "janus/graph/bind.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/symbol.h"

namespace janus::interchange {

/// The opset that export_onnx writes (ai.onnx, the default domain).
inline constexpr int kOnnxOpset = 13;

struct OnnxExportOptions {
  /// The graph's arguments that are the model's inputs (in this order); every other argument is
  /// a parameter, stored in the ONNX file as an initializer.
  std::vector<std::string> input_names = graph::default_input_names(1);
  /// Input shapes by name; an input absent here has the shape that the graph records for it.
  std::map<std::string, Shape> input_shapes;
  /// Axis 0 of the inputs is the batch: a symbolic extent "batch" in the ONNX model, as it is in
  /// the outputs where it reaches them, and reshapes whose target depends on it are written with
  /// ONNX's 0 or -1. The graph is checked by shape inference at a second batch size; one that
  /// fixes its batch size (a reshape or broadcast to a target that holds the batch, inputs of
  /// different batch sizes) is a ValueError / ShapeError naming the node, and a reshape with two
  /// extents that depend on the batch a NotImplementedError naming it. false: every extent
  /// fixed, as given or recorded.
  bool dynamic_batch = true;
  /// The files that the graph and parameters came from, named by errors.
  std::string symbol_file = "<graph>";
  std::string params_file = "<parameters>";
};

/// The serialized ONNX ModelProto (IR version 8, opset kOnnxOpset) of the graph `symbol` with
/// `params` as initializers. Its inputs are named as in options.input_names, its outputs as
/// symbol.list_outputs() names them. Every Janus operator that ONNX can express at inference is
/// mapped, fused nodes (fused_elementwise, fully_connected and conv2d with a relu) as their
/// decomposition. Errors: NotImplementedError naming the node and its operator for one that
/// ONNX cannot express (random numbers, optimizer updates, gradients, batch_norm or dropout in
/// training mode); ValueError naming both files when the parameters lack an argument that is no
/// input, or hold one that the graph does not use; ValueError naming an input whose shape is
/// neither given nor recorded; ShapeError when shapes do not fit the graph.
std::string export_onnx(const graph::Symbol& symbol, const graph::NamedArrays& params,
                        const OnnxExportOptions& options = {});

/// The operators that export_onnx maps (besides creation operators, which it computes), sorted.
std::vector<std::string> onnx_mapped_operators();

/// export_onnx into `path`, written beside it and renamed into place; IOError naming the path
/// when it cannot be written.
void save_onnx(const std::string& path, const graph::Symbol& symbol,
               const graph::NamedArrays& params, const OnnxExportOptions& options = {});

}  // namespace janus::interchange
