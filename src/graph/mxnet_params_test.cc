// The MXNet .params reader: the fixtures of both flavours, the older layouts made by hand, and a
// FormatError naming the file and the byte offset for each kind of bad file.
#include "janus/graph/mxnet_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "janus/base/error.h"
#include "janus/engine/array.h"

#include "testing/mxnet_fixtures.h"
#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::HasSubstr;

// Little-endian bytes of a .params file, built field by field.
struct Bytes {
  std::string s;
  template <typename T>
  Bytes& put(T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Bytes& str(const std::string& t) {
    put<uint64_t>(t.size());
    s += t;
    return *this;
  }
  Bytes& floats(std::initializer_list<float> v) {
    for (float f : v) put(f);
    return *this;
  }
};

constexpr uint32_t kV1 = 0xF993FAC8, kV2 = 0xF993FAC9, kV3 = 0xF993FACA;

Bytes header(uint64_t count) { return Bytes().put<uint64_t>(0x112).put<uint64_t>(0).put(count); }

// One float32 array [2] on cpu in the V2 layout.
Bytes& v2_array(Bytes& b, float x, float y) {
  return b.put(kV2)
      .put<int32_t>(0)
      .put<int32_t>(1)
      .put<int64_t>(2)
      .put<int32_t>(1)
      .put<int32_t>(0)
      .put<int32_t>(0)
      .floats({x, y});
}

NamedArrays parse(const Bytes& b) { return parse_mxnet_params(b.s, "m.params"); }
std::string error(const Bytes& b) {
  return error_of<FormatError>([&] { parse(b); });
}

TEST(MxnetParams, ReadsBothFlavoursOfTheFixtures) {
  for (const char* flavour : testing::kMxnetFlavours) {
    const NamedArrays p =
        load_mxnet_params(testing::mxnet_fixture(flavour, "blocks") + "-0000.params");
    std::map<std::string, Shape> shapes;
    for (const auto& [name, a] : p) shapes[name] = a.shape();
    EXPECT_EQ(shapes.at("blocks0_conv0_weight"), (Shape{8, 3, 3, 3})) << flavour;
    // "aux:" names lose their prefix like "arg:" ones.
    EXPECT_EQ(shapes.at("blocks0_batchnorm0_running_var"), (Shape{8})) << flavour;
    EXPECT_EQ(shapes.at("blocks0_dense0_weight"), (Shape{5, 8})) << flavour;
  }
}

TEST(MxnetParams, ReadsTheOlderLayoutsAndUnnamedLists) {
  Bytes b = header(3);
  v2_array(b, 1, 2);
  // V1: no storage type.
  b.put(kV1).put<int32_t>(1).put<int64_t>(1).put<int32_t>(1).put<int32_t>(0).put<int32_t>(0).floats(
      {3});
  // The oldest: the rank, uint32 extents.
  b.put<uint32_t>(2)
      .put<uint32_t>(1)
      .put<uint32_t>(1)
      .put<int32_t>(1)
      .put<int32_t>(0)
      .put<int32_t>(1)
      .put<double>(4.5);
  b.put<uint64_t>(0);  // no names: the arrays are numbered
  const NamedArrays p = parse(b);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].first, "0");
  EXPECT_EQ(to_vector<float>(p[0].second), (std::vector<float>{1, 2}));
  EXPECT_EQ(to_vector<float>(p[1].second), (std::vector<float>{3}));
  EXPECT_EQ(p[2].second.dtype(), DType::kFloat64);
  EXPECT_EQ(p[2].second.shape(), (Shape{1, 1}));
}

TEST(MxnetParams, NumpyModeScalarsHaveData) {
  Bytes named = header(1);
  named.put(kV3).put<int32_t>(0).put<int32_t>(0).put<int32_t>(1).put<int32_t>(0).put<int32_t>(0);
  named.floats({7}).put<uint64_t>(1).str("arg:s");
  const NamedArrays p = parse(named);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].first, "s");
  EXPECT_EQ(p[0].second.shape(), Shape{});
  EXPECT_EQ(to_vector<float>(p[0].second), (std::vector<float>{7}));
}

TEST(MxnetParams, BadFilesNameTheFileAndTheOffset) {
  EXPECT_THAT(error(Bytes().put<uint32_t>(7)),
              HasSubstr("'m.params': at byte 0: the file ends inside the file's magic number"));
  EXPECT_THAT(error(Bytes().put<uint64_t>(0x113)),
              HasSubstr("at byte 0: magic number 0x113, expected 0x112"));
  EXPECT_THAT(error(header(1 << 30)), HasSubstr("at byte 16: 1073741824 arrays announced"));

  Bytes truncated = header(1);
  v2_array(truncated, 1, 2);
  truncated.s.resize(truncated.s.size() - 3);
  EXPECT_THAT(error(truncated),
              HasSubstr("at byte 56: the data of array 0 ([2] float32) needs 8 bytes but only 5"));

  Bytes bad_magic = header(1).put<uint32_t>(0xDEADBEEF);
  bad_magic.s.resize(bad_magic.s.size() + 16);
  EXPECT_THAT(error(bad_magic), HasSubstr("at byte 24: array 0 starts with 0xDEADBEEF"));

  Bytes sparse = header(1).put(kV2).put<int32_t>(1);
  sparse.s.resize(sparse.s.size() + 16);
  EXPECT_THAT(error(sparse), HasSubstr("at byte 28: array 0 has storage type 1 (row_sparse)"));

  Bytes int8 = header(1).put(kV2).put<int32_t>(0).put<int32_t>(1).put<int64_t>(1);
  int8.put<int32_t>(1).put<int32_t>(0).put<int32_t>(5).put<int32_t>(0);
  EXPECT_THAT(error(int8), HasSubstr("at byte 52: array 0 has dtype int8, which Janus does not"));

  Bytes unknown = header(1).put(kV3).put<int32_t>(0).put<int32_t>(-1);
  unknown.s.resize(unknown.s.size() + 16);
  EXPECT_THAT(error(unknown), HasSubstr("at byte 32: array 0 has an unknown shape"));

  Bytes negative = header(1).put(kV2).put<int32_t>(0).put<int32_t>(1).put<int64_t>(-3);
  negative.s.resize(negative.s.size() + 16);
  EXPECT_THAT(error(negative), HasSubstr("at byte 36: array 0 has extent -3 at axis 0"));

  Bytes names = header(1);
  v2_array(names, 1, 2).put<uint64_t>(2);
  EXPECT_THAT(error(names), HasSubstr("at byte 64: 2 names for 1 arrays"));

  Bytes twice = header(2);
  v2_array(twice, 1, 2);
  v2_array(twice, 1, 2).put<uint64_t>(2).str("arg:w").str("aux:w");
  EXPECT_THAT(error(twice), HasSubstr("two arrays are named 'w'"));

  Bytes trailing = header(1);
  v2_array(trailing, 1, 2).put<uint64_t>(1).str("w").put<uint8_t>(0);
  EXPECT_THAT(error(trailing), HasSubstr("at byte 81: 1 bytes follow the last name"));
}

TEST(MxnetParams, DetectsTheMagicNumber) {
  EXPECT_TRUE(is_mxnet_params(header(0).s));
  EXPECT_FALSE(is_mxnet_params(std::string("\x10\0\0\0\0\0\0\0{}", 10)));
  EXPECT_FALSE(is_mxnet_params(std::string("ab")));
}

TEST(MxnetParams, MissingFileIsAnIOError) {
  EXPECT_THAT(error_of<IOError>([] { load_mxnet_params("/nonexistent/x.params"); }),
              HasSubstr("/nonexistent/x.params"));
}

}  // namespace
}  // namespace janus::graph
