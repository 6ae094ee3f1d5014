// `janus run PREFIX`: loads an exported model with deploy::Predictor, runs it on an input (a
// .npy file, or random numbers of a given shape) and prints the outputs and the timing. Part of
// the janus program (tools/).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace janus::tools {

struct RunOptions {
  std::string prefix;
  int epoch = -1;              // -1: the highest-numbered PREFIX-NNNN.safetensors
  std::string input;           // .npy file
  std::vector<int64_t> shape;  // with random input
  bool random = false;
  int repeat = 10;  // timed calls after the first
};

/// Checks the options (ValueError naming the option) and runs; errors of the files are the
/// Predictor's (FormatError / IOError naming the file).
void run_model(const RunOptions& options, std::ostream& out);

}  // namespace janus::tools
