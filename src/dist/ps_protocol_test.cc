// Key sharding and the element sums of the parameter servers (ps_protocol.h), in one process.
#include "ps_protocol.h"

#include <gtest/gtest.h>

#include <vector>

namespace janus::dist::ps {
namespace {

TEST(PsProtocol, SmallKeysLiveWhollyOnOneServerByKey) {
  for (int64_t key = 0; key < 6; ++key) {
    const std::vector<Part> parts = split_key(key, 1000, 4, /*num_servers=*/3);
    ASSERT_EQ(parts.size(), 1U);
    EXPECT_EQ(parts[0].server, key % 3);
    EXPECT_EQ(parts[0].begin, 0);
    EXPECT_EQ(parts[0].count, 1000);
  }
}

TEST(PsProtocol, BigArraysAreSplitIntoContiguousPartsOnEveryServer) {
  const int64_t n = (int64_t{1} << 20) / 4 + 3;  // just above 1 MB of float32
  const std::vector<Part> parts = split_key(5, n, 4, /*num_servers=*/3);
  ASSERT_EQ(parts.size(), 3U);
  int64_t next = 0;
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(parts[s].server, s);
    EXPECT_EQ(parts[s].begin, next);
    EXPECT_NEAR(static_cast<double>(parts[s].count), static_cast<double>(n) / 3, 1.0);
    next += parts[s].count;
  }
  EXPECT_EQ(next, n);
  // Below the bound, or with one server: one part.
  EXPECT_EQ(split_key(5, n - 4, 4, 3).size(), 1U);
  EXPECT_EQ(split_key(5, n, 4, 1).size(), 1U);
}

TEST(PsProtocol, StringKeyIdsAreStableAndApartFromIntegerKeys) {
  EXPECT_EQ(string_key_id("fc1.weight"), string_key_id("fc1.weight"));
  EXPECT_NE(string_key_id("fc1.weight"), string_key_id("fc1.bias"));
  EXPECT_LT(string_key_id("fc1.weight"), 0);  // integer keys are >= 0
}

TEST(PsProtocol, AddIntoSumsEachSummableDType) {
  std::vector<double> a{1, 2.5}, b{0.5, -1};
  add_into(a.data(), b.data(), 2, DType::kFloat64);
  EXPECT_EQ(a, (std::vector<double>{1.5, 1.5}));
  std::vector<uint8_t> c{1, 250}, d{2, 5};
  add_into(c.data(), d.data(), 2, DType::kUInt8);
  EXPECT_EQ(c, (std::vector<uint8_t>{3, 255}));
  EXPECT_TRUE(is_summable(DType::kInt64));
  EXPECT_FALSE(is_summable(DType::kFloat16));
}

}  // namespace
}  // namespace janus::dist::ps
