// The program of a fused elementwise kernel (what the graph's fuse_elementwise pass builds and
// the fused_elementwise operator runs). Layer: ops.
#pragma once

#include <string>
#include <vector>

#include "janus/ops/registry.h"

namespace janus::ops {

/// One step: an elementwise operator with int/float/bool attributes, reading fused inputs
/// (index >= 0) or earlier steps' results (-1 - step).
struct FusedStep {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<int> inputs;
};

/// "name(attr,...)[in,...];..." with inputs "iK" (fused input K) or "tJ" (step J's result).
/// The last step's result is the fused output.
std::string encode_fused_program(const std::vector<FusedStep>& steps);
/// The steps of a program; ValueError naming the problem for a malformed one.
std::vector<FusedStep> decode_fused_program(const std::string& program);
/// Whether `op` may be a step of a fused program (elementwise, attributes int/float/bool only,
/// one output, deterministic, no in-place updates).
bool fusable(const OpDef& op);

}  // namespace janus::ops
