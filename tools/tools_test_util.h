// Helpers of the tools/ tests: scratch directories, files and .npy files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "testing/npy_file.h"

namespace janus::tools::testing {

/// A fresh directory under the system's temporary one, named `name` and the process id, removed
/// with everything in it when the object is destroyed (a static one: at exit), so that test runs
/// leave nothing behind.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }  // NOLINT: used as a path
  std::filesystem::path operator/(const std::filesystem::path& p) const { return path_ / p; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

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
