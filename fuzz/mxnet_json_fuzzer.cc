// Fuzz target: mxnet_symbol_from_json on arbitrary bytes, then, for what loads, the Janus JSON
// round trip. Anything but a FormatError (or a clean load) is a bug.
#include <string_view>

#include "janus/base/error.h"
#include "janus/graph/mxnet_json.h"

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const janus::graph::Symbol s = janus::graph::mxnet_symbol_from_json(text, "fuzz.json");
    janus::graph::Symbol::fromjson(s.tojson(), "roundtrip.json");
  } catch (const janus::FormatError&) {
  }
  return 0;
}
