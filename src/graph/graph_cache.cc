// InputSignature: the key of the compiled-graph cache.
#include "janus/graph/graph_cache.h"

#include <fmt/format.h>

namespace janus::graph {

InputSignature InputSignature::of(std::span<const NDArray> inputs, bool training) {
  InputSignature sig;
  sig.training = training;
  sig.inputs.reserve(inputs.size());
  for (const NDArray& x : inputs) sig.inputs.push_back({x.shape(), x.dtype(), x.device()});
  return sig;
}

bool InputSignature::operator==(const InputSignature& o) const {
  if (training != o.training || inputs.size() != o.inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ops::TensorSpec &a = inputs[i], &b = o.inputs[i];
    if (a.shape != b.shape || a.dtype != b.dtype || a.device != b.device) return false;
  }
  return true;
}

std::string InputSignature::to_string() const {
  std::string out;
  for (const ops::TensorSpec& s : inputs) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} {} on {}", s.shape, s.dtype, s.device);
  }
  return fmt::format("{}, {}", out, training ? "training" : "inference");
}

}  // namespace janus::graph
