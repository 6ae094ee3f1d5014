// `janus run PREFIX`: loads an exported model (Janus's PREFIX-symbol.json +
// PREFIX-NNNN.safetensors, or Apache MXNet 1.x's PREFIX-symbol.json + PREFIX-NNNN.params) with
// deploy::Predictor, runs it on an input (a .npy file, or random numbers of a given shape), prints
// the outputs and the timing, and optionally writes the outputs to .npy files. Part of the janus
// program (tools/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace janus::tools {

struct RunOptions {
  std::string prefix;
  std::optional<int> epoch;  // absent: the highest-numbered PREFIX-NNNN.safetensors (.params)
  std::string input;         // .npy file
  bool random = false;
  std::vector<int64_t> shape;  // with random input; empty: the input shape that the graph records
  int repeat = 10;             // timed calls after the first
  std::string output;          // .npy file for the outputs; empty: none written
};

/// The parameters file of the model exported as PREFIX: PREFIX-NNNN.safetensors (Janus's), else
/// PREFIX-NNNN.params (Apache MXNet's), for `epoch`, or when it is absent for the highest NNNN
/// beside PREFIX (Janus's on a tie). IOError naming the files and PREFIX's folder when there is
/// none. `janus run` and `janus convert` find their parameters with it.
std::string params_file_of(const std::string& prefix, std::optional<int> epoch);

/// Checks the options (ValueError naming the option) and runs, printing every output of the
/// graph by name and, with `output`, writing them: one output to that file, several to
/// STEM-0.npy, STEM-1.npy, ... beside it (graph::save_npy); errors of the files are the Predictor's
/// (FormatError / IOError naming the file), and a shape whose element count overflows is a
/// ShapeError.
void run_model(const RunOptions& options, std::ostream& out);

}  // namespace janus::tools
