// Fuzz target: Symbol::fromjson on arbitrary bytes, then, for what loads, the printers, the
// round trip and shape inference. Anything but a FormatError (or a clean load) is a bug.
#include <string_view>

#include "janus/base/error.h"
#include "janus/graph/symbol.h"

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const janus::graph::Symbol s = janus::graph::Symbol::fromjson(text, "fuzz.json");
    s.summary();
    s.to_dot();
    janus::graph::Symbol::fromjson(s.tojson(), "roundtrip.json");
    // Shape inference runs each operator's shape rule on whatever attributes the file holds:
    // typed errors are fine, crashes are not.
    try {
      s.infer({});
    } catch (const janus::Error&) {
    }
  } catch (const janus::FormatError&) {
  }
  return 0;
}
