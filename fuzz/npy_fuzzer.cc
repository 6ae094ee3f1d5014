// Fuzz target: load_npy (the .npy reader of `janus run --input` and np.load) on arbitrary bytes,
// written to a temporary file. Anything but a FormatError (or a clean load) is a bug.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_target.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() /
       ("janus_fuzz_" + std::to_string(::getpid()) + ".npy"))
          .string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    janus::wait_to_read(janus::graph::load_npy(path));
  } catch (const janus::FormatError&) {
  }
  std::remove(path.c_str());
  return 0;
}
