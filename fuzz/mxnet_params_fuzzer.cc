// Fuzz target: parse_mxnet_params on arbitrary bytes. Anything but a FormatError (or a clean
// load) is a bug.
#include <span>

#include "janus/base/error.h"
#include "janus/graph/mxnet_params.h"

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    janus::graph::parse_mxnet_params(
        std::span<const char>(reinterpret_cast<const char*>(data), size), "fuzz.params");
  } catch (const janus::FormatError&) {
  }
  return 0;
}
