// Runs a fuzz target on every file named on the command line (or in a named directory), and on
// seeded random mutations of each (flipped, inserted and deleted bytes, truncations): the
// corpus replay and a small deterministic fuzzing run in `make test`. Any crash or sanitizer
// report fails the test. JANUS_FUZZ_MUTATIONS sets the mutations per file (default 300).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_target.h"

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no corpus files given\n");
    return 2;
  }
  const char* env = std::getenv("JANUS_FUZZ_MUTATIONS");
  const int mutations = env != nullptr ? std::atoi(env) : 300;
  std::mt19937 rng(20261122);
  auto run = [](const std::string& bytes) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  };
  size_t inputs = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    run(bytes);
    ++inputs;
    for (int m = 0; m < mutations; ++m) {
      std::string x = bytes;
      const int edits = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int e = 0; e < edits; ++e) {
        const size_t at =
            x.empty() ? 0 : std::uniform_int_distribution<size_t>(0, x.size() - 1)(rng);
        const char byte = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
          case 0:
            if (!x.empty()) x[at] = byte;
            break;
          case 1:
            x.insert(x.begin() + static_cast<std::ptrdiff_t>(at), byte);
            break;
          case 2:
            if (!x.empty()) x.erase(at, 1);
            break;
          default:
            x.resize(at);
            break;
        }
      }
      run(x);
      ++inputs;
    }
  }
  std::printf("replay: %zu corpus files, %zu inputs ran\n", files.size(), inputs);
  return 0;
}
