// Helpers of the tools/ tests: scratch directories (TempDir), files and .npy files.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/npy_file.h"
#include "testing/temp_dir.h"

namespace janus::tools::testing {

using janus::testing::TempDir;

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

using janus::testing::npy;

}  // namespace janus::tools::testing
