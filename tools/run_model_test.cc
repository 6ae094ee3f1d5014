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
#include "tools_test_util.h"
#include "train.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;

using testing::npy;
using testing::temp_dir;
using training::train;
using training::TrainOptions;

void write(const std::filesystem::path& p, const std::string& bytes) {
  testing::write_file(p, bytes);
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
  // The shape's extents: too large to read, an element count that overflows, negative.
  write(dir / "huge.npy", npy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (99999999999999999999, 4), }",
                              ""));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "huge.npy").string()); }),
              HasSubstr("the shape (99999999999999999999, 4) has the extent 99999999999999999999, "
                        "expected an integer from 0 to 9223372036854775807"));
  write(dir / "overflow.npy", npy("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (4611686018427387904, 4), }",
                                  ""));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "overflow.npy").string()); }),
              HasSubstr("shape [4611686018427387904, 4]: the element count overflows int64"));
  write(dir / "bytes.npy", npy("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (2305843009213693952, 2), }",
                               ""));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "bytes.npy").string()); }),
              HasSubstr("shape [2305843009213693952, 2] of float64 needs more than "
                        "18446744073709551615 data bytes, the file holds 0"));
  write(dir / "negative.npy",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 4), }", std::string(32, '\0')));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "negative.npy").string()); }),
              HasSubstr("the shape (-2, 4) has the extent -2"));
  write(dir / "long.npy",
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(12, '\0')));
  EXPECT_THAT(error_of<FormatError>([&] { load_npy((dir / "long.npy").string()); }),
              HasSubstr("shape [2] of float32 needs 8 data bytes, the file holds 12"));
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
  r.shape.clear();  // the input shape that the exported graph records
  std::ostringstream recorded;
  run_model(r, recorded);
  EXPECT_THAT(recorded.str(), ::testing::ContainsRegex(R"(input: \[[0-9]+, 1, 28, 28\] float32)"));
  r.epoch = 7;
  EXPECT_THAT(error_of<IOError>([&] { run_model(r, out); }), HasSubstr("mlp-0007.safetensors"));
  r.random = false;
  EXPECT_THAT(error_of<ValueError>([&] { run_model(r, out); }),
              HasSubstr("give exactly one of --input FILE.npy and --random [--shape ...]"));
  o.hybridize = false;
  EXPECT_THAT(error_of<ValueError>([&] { train(o, train_out); }), HasSubstr("needs --hybridize"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace janus::tools
