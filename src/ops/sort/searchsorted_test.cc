// Tests of searchsorted beyond its conformance spec: NaN's place, integer and half dtypes, values
// of any shape, an empty a, and the messages of the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

NDArray vec(std::vector<double> v, Shape s, DType dtype = DType::kFloat64) {
  return from_vector<double>(v, s, dtype);
}

std::vector<int64_t> positions(const NDArray& a, const NDArray& v, bool right) {
  const NDArray p = searchsorted(a, v, right);
  EXPECT_EQ(p.dtype(), DType::kInt64);
  EXPECT_EQ(p.shape(), v.shape());
  return to_vector<int64_t>(p);
}

TEST(Searchsorted, TiesGoBeforeOrAfterTheEqualElements) {
  const NDArray a = vec({1, 2, 2, 2, 5}, {5});
  const NDArray v = vec({0, 1, 2, 3, 5, 6}, {2, 3});
  EXPECT_THAT(positions(a, v, false), ElementsAre(0, 0, 1, 4, 4, 5));
  EXPECT_THAT(positions(a, v, true), ElementsAre(0, 1, 4, 4, 5, 5));
}

TEST(Searchsorted, NaNSortsAfterEveryNumber) {
  const NDArray a = vec({-1, 3, kNaN, kNaN}, {4});
  const NDArray v = vec({kNaN, 100, -2}, {3});
  EXPECT_THAT(positions(a, v, false), ElementsAre(2, 2, 0));
  EXPECT_THAT(positions(a, v, true), ElementsAre(4, 2, 0));
}

TEST(Searchsorted, IntegerAndHalfDTypes) {
  for (const DType dtype : {DType::kInt64, DType::kInt32, DType::kUInt8, DType::kFloat16}) {
    const NDArray a = vec({1, 3, 3, 7}, {4}, dtype);
    const NDArray v = vec({3, 8, 0}, {3}, dtype);
    EXPECT_THAT(positions(a, v, false), ElementsAre(1, 4, 0)) << dtype_name(dtype);
    EXPECT_THAT(positions(a, v, true), ElementsAre(3, 4, 0)) << dtype_name(dtype);
  }
}

TEST(Searchsorted, EmptyArrayAndScalarValue) {
  EXPECT_THAT(positions(vec({}, {0}), vec({1, 2}, {2}), true), ElementsAre(0, 0));
  EXPECT_THAT(positions(vec({1, 2, 3}, {3}), vec({2.5}, {}), false), ElementsAre(2));
}

TEST(Searchsorted, ErrorsNameTheShapeAndTheDTypes) {
  EXPECT_THAT(error_of<ShapeError>([] {
                searchsorted(vec({1, 2, 3, 4}, {2, 2}), vec({1}, {1}));
              }),
              HasSubstr("searchsorted: a has shape [2, 2], expected one dimension"));
  EXPECT_THAT(error_of<TypeError>([] {
                searchsorted(vec({1, 2}, {2}), vec({1}, {1}, DType::kFloat32));
              }),
              HasSubstr("a and v have dtypes float64 and float32, expected the same dtype"));
}

}  // namespace
}  // namespace janus
