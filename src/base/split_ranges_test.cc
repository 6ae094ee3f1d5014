// split_ranges: even and uneven splits, fewer rows than parts, and the errors.
#include "janus/base/split_ranges.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"

namespace janus {
namespace {

using R = std::vector<std::pair<int64_t, int64_t>>;

TEST(SplitRanges, EvenAndUneven) {
  EXPECT_EQ(split_ranges(8, 2), (R{{0, 4}, {4, 8}}));
  EXPECT_EQ(split_ranges(10, 4, false), (R{{0, 3}, {3, 6}, {6, 8}, {8, 10}}));
  EXPECT_EQ(split_ranges(2, 4, false), (R{{0, 1}, {1, 2}}));  // fewer rows than parts
  EXPECT_EQ(split_ranges(0, 3), (R{{0, 0}, {0, 0}, {0, 0}}));
}

TEST(SplitRanges, BadCountsAreValueErrorsNamingThem) {
  EXPECT_THROW(
      {
        try {
          split_ranges(5, 2);
        } catch (const ValueError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr(
                                    "a batch of 5 rows does not split evenly into 2 parts (1 "
                                    "rows left over)"));
          throw;
        }
      },
      ValueError);
  EXPECT_THROW(split_ranges(4, 0), ValueError);
  EXPECT_THROW(split_ranges(-1, 2), ValueError);
}

}  // namespace
}  // namespace janus
