// TempDir: a test's scratch directory, removed when the test is done with it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace janus::testing {

/// A fresh, empty directory under the system's temporary one, named `name` followed by the
/// process id, removed with everything in it when the object is destroyed (a static one: at
/// exit), also when an assertion ends the test early, so that test runs leave nothing behind.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);  // a leftover of a killed run with the same pid
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  operator const std::filesystem::path&() const { return path_; }  // NOLINT: used as a path
  std::filesystem::path operator/(const std::filesystem::path& p) const { return path_ / p; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// `prefix`, then the running test's suite and name (a parameterized test's slashes as '_'), for
/// a fixture's TempDir of its own per test:
///   const janus::testing::TempDir dir_{janus::testing::test_scoped("janus_export_")};
inline std::string test_scoped(std::string_view prefix) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(prefix) + info->test_suite_name() + "_" + info->name() + "_";
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

}  // namespace janus::testing
