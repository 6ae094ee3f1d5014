// The .npy reader: a valid file, and a FormatError naming the file and the problem for each
// kind of bad one.
#include "janus/graph/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/npy_file.h"
#include "testing/temp_dir.h"
#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::HasSubstr;
using testing::npy;

void write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(Npy, ReadsCOrderArraysAndNamesBadFiles) {
  const testing::TempDir dir("janus_npy_");
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
}

TEST(Npy, ReadsTheHeaderDictInAnyOrderAndSpacing) {
  const testing::TempDir dir("janus_npy_");
  const int32_t values[] = {7, -8};
  const std::string data(reinterpret_cast<const char*>(values), sizeof(values));
  for (const std::string header :
       {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
        "{\"shape\":(2,),\"descr\":\"<i4\",\"fortran_order\":False}",
        "{ 'fortran_order' : False ,\t'shape' : ( 2 , ) , 'descr' : 'i4' }",
        "{'descr': '=i4', 'fortran_order': False, 'shape': (2, )}"}) {
    write(dir / "x.npy", npy(header, data));
    const NDArray a = load_npy((dir / "x.npy").string());
    EXPECT_EQ(a.shape(), Shape({2})) << header;
    EXPECT_EQ(to_vector<int32_t>(a), std::vector<int32_t>({7, -8})) << header;
  }
  write(dir / "scalar.npy",
        npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", std::string(8, '\0')));
  EXPECT_EQ(load_npy((dir / "scalar.npy").string()).shape(), Shape({}));
}

TEST(Npy, NamesWhatIsWrongWithTheHeaderDict) {
  const testing::TempDir dir("janus_npy_");
  auto error = [&](const std::string& header) {
    write(dir / "x.npy", npy(header, std::string(4, '\0')));
    return error_of<FormatError>([&] { load_npy((dir / "x.npy").string()); });
  };
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
              HasSubstr("the header has the key 'x', expected 'descr', 'fortran_order' and "
                        "'shape'"));
  EXPECT_THAT(error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"),
              HasSubstr("the header has the key 'descr' twice"));
  EXPECT_THAT(error("{'descr': '<f4', 'shape': (1,)}"),
              HasSubstr("the header has no 'fortran_order'"));
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}"),
              HasSubstr("the header's 'fortran_order' is not True or False"));
  EXPECT_THAT(error("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}"),
              HasSubstr("the header has 'f' at offset 17, expected ','"));
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)"),
              HasSubstr("the header ends where ',' was expected"));
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x"),
              HasSubstr("the header has text after its closing '}'"));
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}"),
              HasSubstr("the shape (1,,) has the extent , expected an integer"));
  EXPECT_THAT(error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,"),
              HasSubstr("the header's 'shape' has no closing ')'"));
  EXPECT_THAT(error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}"),
              HasSubstr("the header has no quoted string at offset 10"));
}

TEST(Npy, SaveThenLoadGivesTheSameArrayForEveryNumPyDType) {
  const testing::TempDir dir("janus_npy_");
  const std::string path = (dir / "x.npy").string();
  for (const DType dtype : kAllDTypes) {
    if (dtype == DType::kBFloat16) continue;
    for (const Shape& shape : {Shape({}), Shape({5}), Shape({2, 3}), Shape({0, 4})}) {
      std::vector<double> values(static_cast<size_t>(shape.numel()));
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 2);
      const NDArray a = from_vector(values, shape, dtype);
      save_npy(path, a);
      const NDArray b = load_npy(path);
      EXPECT_EQ(b.shape(), shape) << dtype_name(dtype);
      EXPECT_EQ(b.dtype(), dtype) << dtype_name(dtype);
      EXPECT_EQ(to_vector<double>(b), values)
          << dtype_name(dtype) << " " << fmt::format("{}", shape);
    }
  }
  save_npy(path, from_vector<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3})));
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes.size(), 128u + 24u);  // the data starts 64-byte aligned
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_THAT(error_of<TypeError>([&] { save_npy(path, zeros(Shape({2}), DType::kBFloat16)); }),
              HasSubstr("save_npy: '" + path + "': bfloat16 has no NumPy dtype"));
  EXPECT_THAT(error_of<IOError>([&] { save_npy((dir / "no" / "x.npy").string(), zeros({2})); }),
              HasSubstr("save_npy: cannot write '" + (dir / "no" / "x.npy").string() + "'"));
}

}  // namespace
}  // namespace janus::graph
