// `janus run PREFIX`: loads an exported model with deploy::Predictor, runs it on an input (a
// .npy file, or random numbers of a given shape) and prints the outputs and the timing. Part of
// the janus program (tools/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace janus::tools {

struct RunOptions {
  std::string prefix;
  std::optional<int> epoch;  // absent: the highest-numbered PREFIX-NNNN.safetensors
  std::string input;         // .npy file
  bool random = false;
  std::vector<int64_t> shape;  // with random input; empty: the input shape that the graph records
  int repeat = 10;             // timed calls after the first
};

/// Checks the options (ValueError naming the option) and runs, printing every output of the
/// graph by name; errors of the files are the Predictor's (FormatError / IOError naming the
/// file), and a shape whose element count overflows is a ShapeError.
void run_model(const RunOptions& options, std::ostream& out);

}  // namespace janus::tools
