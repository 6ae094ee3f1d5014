// `janus train --hybridize --export` then `janus run`, and the .npy reader's errors.
#include "run_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "npy.h"
#include "testing/test_util.h"
#include "train.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string npy(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(Npy, ReadsCOrderArraysAndNamesBadFiles) {
  const auto dir = temp_dir("janus_npy_");
  const float values[] = {1, 2, 3, 4, 5, 6};
  write(dir / "ok.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                            std::string(reinterpret_cast<const char*>(values), sizeof(values))));
  const NDArray a = load_npy((dir / "ok.npy").string());
  EXPECT_EQ(a.shape(), Shape({2, 3}));
  EXPECT_EQ(to_vector<float>(a), std::vector<float>(values, values + 6));
  write(dir / "short.npy",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "abc"));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "short.npy").string()); }),
              HasSubstr("shape [2, 3] of float32 needs 24 data bytes, the file holds 3"));
  write(dir / "c16.npy",
        npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", std::string(16, '\0')));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "c16.npy").string()); }),
              HasSubstr("dtype 'c16' is not supported"));
  write(dir / "f.npy",
        npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0')));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "f.npy").string()); }),
              HasSubstr("Fortran-order arrays are not supported"));
  write(dir / "junk.npy", "hello world");
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "junk.npy").string()); }),
              HasSubstr("npy file '" + (dir / "junk.npy").string() + "': no .npy magic"));
  std::filesystem::remove_all(dir);
}

TEST(Run, TrainHybridizedExportAndRunTheExportedModel) {
  const auto dir = temp_dir("janus_run_");
  TrainOptions o;
  o.model = "mlp";
  o.epochs = 1;
  o.limit = 1200;
  o.progress = false;
  o.hybridize = true;
  o.export_prefix = (dir / "mlp").string();
  std::ostringstream train_out;
  train(o, train_out);
  EXPECT_THAT(train_out.str(), HasSubstr("exported the model to"));
  ASSERT_TRUE(std::filesystem::exists(dir / "mlp-0001.safetensors"));
  RunOptions r;
  r.prefix = o.export_prefix;
  r.random = true;
  r.shape = {2, 1, 28, 28};
  r.repeat = 2;
  std::ostringstream out;
  run_model(r, out);
  EXPECT_THAT(out.str(), HasSubstr("mlp-0001.safetensors"));  // the latest epoch was found
  EXPECT_THAT(out.str(), HasSubstr("([2, 10])"));
  r.epoch = 7;
  EXPECT_THAT(error_of<IOError>([&] { run_model(r, out); }), HasSubstr("mlp-0007.safetensors"));
  r.random = false;
  EXPECT_THAT(error_of<ValueError>([&] { run_model(r, out); }),
              HasSubstr("give exactly one of --input FILE.npy and --random --shape"));
  o.hybridize = false;
  EXPECT_THAT(error_of<ValueError>([&] { train(o, train_out); }), HasSubstr("needs --hybridize"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace janus::tools
