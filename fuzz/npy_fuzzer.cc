// Fuzz target: read_npy (the .npy reader of `janus run --input` and np.load; load_npy reads the
// file, then calls it) on arbitrary bytes, in memory. Anything but a FormatError (or a clean load)
// is a bug.
#include <string>
#include <string_view>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/npy.h"

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string name = "fuzz.npy";
  try {
    janus::wait_to_read(
        janus::graph::read_npy(std::string_view(reinterpret_cast<const char*>(data), size), name));
  } catch (const janus::FormatError&) {
  }
  return 0;
}
