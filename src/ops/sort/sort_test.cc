// Tests of sort, argsort, topk and scatter_along_axis beyond the conformance specs: ties and
// stability, descending, NaN, several axes, dtypes, gradients and the messages of the errors.
#include "janus/ops/sort.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

NDArray vec(std::vector<double> v, Shape s, DType dtype = DType::kFloat64) {
  return from_vector<double>(v, s, dtype);
}

// NaN-aware equality of two double vectors.
void expect_same(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i] << ", expected NaN";
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

TEST(OpSort, TiesKeepTheirOrderAscendingAndDescending) {
  const NDArray x = vec({3, 1, 3, 2, 1, 3}, {6});
  EXPECT_THAT(to_vector<int64_t>(argsort(x)), ElementsAre(1, 4, 3, 0, 2, 5));
  EXPECT_THAT(to_vector<int64_t>(argsort(x, 0, true)), ElementsAre(0, 2, 5, 3, 1, 4));
  EXPECT_THAT(to_vector<double>(sort(x)), ElementsAre(1, 1, 2, 3, 3, 3));
  EXPECT_THAT(to_vector<double>(sort(x, -1, true)), ElementsAre(3, 3, 3, 2, 1, 1));
}

// -0.0 and 0.0 compare equal: a stable sort keeps them in their order, in both directions.
TEST(OpSort, SignedZerosKeepTheirOrder) {
  const NDArray x = vec({0.0, -0.0, 1.0, 0.0, -0.0}, {5});
  for (bool descending : {false, true}) {
    const std::vector<double> y = to_vector<double>(sort(x, 0, descending));
    const size_t first = descending ? 1 : 0;
    std::vector<bool> negative;
    for (size_t i = first; i < first + 4; ++i) negative.push_back(std::signbit(y[i]));
    EXPECT_THAT(negative, ElementsAre(false, true, false, true)) << "descending " << descending;
  }
}

TEST(OpSort, NaNGoesLastAscendingAndFirstDescending) {
  const NDArray x = vec({2, kNaN, -1, kNaN, 0}, {5});
  expect_same(to_vector<double>(sort(x)), {-1, 0, 2, kNaN, kNaN});
  EXPECT_THAT(to_vector<int64_t>(argsort(x)), ElementsAre(2, 4, 0, 1, 3));
  expect_same(to_vector<double>(sort(x, 0, true)), {kNaN, kNaN, 2, 0, -1});
  EXPECT_THAT(to_vector<int64_t>(argsort(x, 0, true)), ElementsAre(1, 3, 0, 4, 2));
  // topk: NaN is the largest value.
  EXPECT_THAT(to_vector<double>(topk(x, -1, 2, "indices")[0]), ElementsAre(1, 3));
  EXPECT_THAT(to_vector<double>(topk(x, -1, 2, "indices", true)[0]), ElementsAre(2, 4));
}

TEST(OpSort, EveryAxisOfAThreeDimensionalArray) {
  // x[i][j][k] = values chosen so that each axis has a different order.
  const std::vector<double> v = {5, 1, 4, 2, 6, 0, 3, 7, 9, 8, 11, 10};
  const NDArray x = vec(v, {2, 3, 2});
  EXPECT_THAT(to_vector<double>(sort(x, 0)), ElementsAre(3, 1, 4, 2, 6, 0, 5, 7, 9, 8, 11, 10));
  EXPECT_THAT(to_vector<double>(sort(x, 1)), ElementsAre(4, 0, 5, 1, 6, 2, 3, 7, 9, 8, 11, 10));
  EXPECT_THAT(to_vector<double>(sort(x, 2)), ElementsAre(1, 5, 2, 4, 0, 6, 3, 7, 8, 9, 10, 11));
  EXPECT_THAT(to_vector<int64_t>(argsort(x, -2)), ElementsAre(1, 2, 0, 0, 2, 1, 0, 0, 1, 1, 2, 2));
}

TEST(OpSort, IntegerBoolAndHalfDtypes) {
  EXPECT_THAT(to_vector<int32_t>(sort(vec({3, -1, 2}, {3}, DType::kInt32))), ElementsAre(-1, 2, 3));
  EXPECT_THAT(to_vector<int64_t>(sort(vec({3, -1, 2}, {3}, DType::kInt64), 0, true)),
              ElementsAre(3, 2, -1));
  EXPECT_THAT(to_vector<uint8_t>(sort(vec({200, 3, 7}, {3}, DType::kUInt8))),
              ElementsAre(3, 7, 200));
  EXPECT_THAT(to_vector<int64_t>(argsort(vec({1, 0, 1, 0}, {4}, DType::kBool))),
              ElementsAre(1, 3, 0, 2));
  EXPECT_THAT(to_vector<double>(sort(vec({0.5, -2, 1.5}, {3}, DType::kFloat16))),
              ElementsAre(-2, 0.5, 1.5));
  EXPECT_THAT(to_vector<double>(sort(vec({0.5, -2, 1.5}, {3}, DType::kBFloat16), 0, true)),
              ElementsAre(1.5, 0.5, -2));
  EXPECT_EQ(argsort(vec({1, 2}, {2}), -1, false, DType::kInt32).dtype(), DType::kInt32);
  EXPECT_THAT(to_vector<float>(argsort(vec({2, 1}, {2}), -1, false, DType::kFloat32)),
              ElementsAre(1, 0));
}

TEST(OpTopk, EveryReturnTypeAlongEachAxis) {
  const NDArray x = vec({3, 1, 2, 5, 0, 7, 7, 1}, {2, 4});
  std::vector<NDArray> both = topk(x, -1, 2, "both");
  EXPECT_THAT(to_vector<double>(both[0]), ElementsAre(5, 3, 7, 7));
  EXPECT_THAT(to_vector<float>(both[1]), ElementsAre(3, 0, 1, 2));  // ties by position
  EXPECT_EQ(both[1].dtype(), DType::kFloat32);                      // MXNet's default
  EXPECT_THAT(to_vector<double>(topk(x, -1, 2, "value")[0]), ElementsAre(5, 3, 7, 7));
  EXPECT_THAT(to_vector<float>(topk(x, -1, 2, "indices")[0]), ElementsAre(3, 0, 1, 2));
  const NDArray mask = topk(x, 1, 2, "mask")[0];
  EXPECT_EQ(mask.dtype(), DType::kFloat64);
  EXPECT_THAT(to_vector<double>(mask), ElementsAre(1, 0, 0, 1, 0, 1, 1, 0));
  std::vector<NDArray> col = topk(x, 0, 1, "both", true, DType::kInt64);
  EXPECT_THAT(to_vector<double>(col[0]), ElementsAre(0, 1, 2, 1));
  EXPECT_THAT(to_vector<int64_t>(col[1]), ElementsAre(1, 0, 0, 1));
  EXPECT_EQ(col[1].shape(), Shape({1, 4}));
}

// Output 1 holds the positions whatever ret_typ: with 'indices' the same as y, in `dtype`;
// with 'mask' beside the mask; with 'value' beside the values.
TEST(OpTopk, SecondOutputIsAlwaysThePositions) {
  const NDArray x = vec({3, 1, 2, 5, 0, 7, 7, 1}, {2, 4});
  const std::vector<NDArray> indices = topk(x, -1, 2, "indices", false, DType::kInt32);
  EXPECT_EQ(indices[0].dtype(), DType::kInt32);
  EXPECT_EQ(indices[1].dtype(), DType::kInt32);
  EXPECT_THAT(to_vector<int32_t>(indices[0]), ElementsAre(3, 0, 1, 2));
  EXPECT_THAT(to_vector<int32_t>(indices[1]), ElementsAre(3, 0, 1, 2));
  const std::vector<NDArray> mask = topk(x, -1, 2, "mask", true, DType::kInt64);
  EXPECT_THAT(to_vector<double>(mask[0]), ElementsAre(0, 1, 1, 0, 1, 0, 0, 1));
  EXPECT_THAT(to_vector<int64_t>(mask[1]), ElementsAre(1, 2, 0, 3));
  EXPECT_EQ(mask[1].shape(), Shape({2, 2}));
  const std::vector<NDArray> value = topk(x, 0, 1, "value");
  EXPECT_THAT(to_vector<double>(value[0]), ElementsAre(3, 7, 7, 5));
  EXPECT_THAT(to_vector<float>(value[1]), ElementsAre(0, 1, 1, 0));
}

TEST(OpSort, GradientsGoBackToTheSourcePositions) {
  NDArray x = vec({3, 1, 2, 5, 0, 7, 7, 1}, {2, 4});
  autograd::attach_grad(x);
  std::vector<NDArray> heads;
  {
    autograd::RecordScope record;
    heads = {sort(x, -1, true)};
  }
  std::vector<NDArray> dy = {vec({10, 20, 30, 40, 50, 60, 70, 80}, {2, 4})};
  autograd::backward(heads, dy);
  EXPECT_THAT(to_vector<double>(autograd::grad(x)), ElementsAre(20, 40, 30, 10, 80, 50, 60, 70));
  {
    autograd::RecordScope record;
    heads = {topk(x, -1, 2, "value")[0]};
  }
  dy = {vec({1, 2, 3, 4}, {2, 2})};
  autograd::backward(heads, dy);
  EXPECT_THAT(to_vector<double>(autograd::grad(x)), ElementsAre(2, 0, 0, 1, 0, 3, 4, 0));
}

TEST(OpSort, ScatterAlongAxisAddsRepeatedPositions) {
  const NDArray dy = vec({1, 2, 3, 4, 5, 6}, {2, 3});
  const NDArray idx = vec({0, 0, 2, 1, 3, 1}, {2, 3}, DType::kInt64);
  EXPECT_THAT(to_vector<double>(scatter_along_axis(dy, idx, 1, 4)),
              ElementsAre(3, 0, 3, 0, 0, 10, 0, 5));
  const NDArray bad = vec({0, 4, 1, 1, 1, 1}, {2, 3}, DType::kInt64);
  EXPECT_THAT(error_of<IndexError>([&] { wait_to_read(scatter_along_axis(dy, bad, 1, 4)); }),
              HasSubstr("scatter_along_axis: index 4 at position 1 is not a position of an axis "
                        "of extent 4, expected an integer in [-4, 4)"));
  // Negative positions count from the end.
  const NDArray neg = vec({-4, -4, -2, -3, -1, -3}, {2, 3}, DType::kInt64);
  EXPECT_THAT(to_vector<double>(scatter_along_axis(dy, neg, 1, 4)),
              ElementsAre(3, 0, 3, 0, 0, 10, 0, 5));
}

TEST(OpSort, TakeAlongAxisWithArgsortsPositionsIsSort) {
  const NDArray x = vec({3, 1, 2, 5, 0, 7, 7, 1, 4, 4, 2, 9}, {3, 4});
  for (int64_t axis : {0, 1, -1}) {
    EXPECT_EQ(to_vector<double>(take_along_axis(x, argsort(x, axis), axis)),
              to_vector<double>(sort(x, axis)))
        << "axis " << axis;
  }
  // Fewer (or more) positions than the axis has, negative ones, float32 positions (legacy).
  const NDArray idx = vec({-1, 0, 2, 2, 3, -4}, {3, 2}, DType::kFloat32);
  EXPECT_THAT(to_vector<double>(take_along_axis(x, idx, 1)), ElementsAre(5, 3, 7, 7, 9, 4));
  EXPECT_THAT(error_of<ShapeError>([&] {
                take_along_axis(x, zeros({2, 2}, DType::kInt64), 1);
              }),
              HasSubstr("take_along_axis: indices have shape [2, 2], expected x's shape [3, 4] "
                        "except along axis 1"));
  EXPECT_THAT(
      error_of<IndexError>([&] {
        wait_to_read(take_along_axis(x, vec({0, 1, 2, 3, 4, 0}, {3, 2}, DType::kInt64), 1));
      }),
      HasSubstr("take_along_axis: index 4 at position 4 is not a position of an axis of extent "
                "4, expected an integer in [-4, 4)"));
}

TEST(OpSort, TakeAlongAxisGradientIsTheScatter) {
  NDArray x = vec({1, 2, 3, 4}, {4});
  autograd::attach_grad(x);
  std::vector<NDArray> heads;
  {
    autograd::RecordScope record;
    heads = {take_along_axis(x, vec({2, 2, -1}, {3}, DType::kInt64), 0)};
  }
  std::vector<NDArray> dy = {vec({1, 10, 100}, {3})};
  autograd::backward(heads, dy);
  EXPECT_THAT(to_vector<double>(autograd::grad(x)), ElementsAre(0, 0, 11, 100));
}

TEST(OpSort, ErrorsNameTheValuesAndWhatWasExpected) {
  const NDArray x = zeros({2, 3});
  EXPECT_THAT(error_of<IndexError>([&] { sort(x, 2); }),
              HasSubstr("sort: axis 2 is out of range for an array of 2 dimensions, expected in "
                        "[-2, 2)"));
  EXPECT_THAT(error_of<IndexError>([&] { argsort(x, -3); }), HasSubstr("argsort: axis -3"));
  EXPECT_THAT(error_of<ShapeError>([&] { sort(zeros({})); }),
              HasSubstr("sort: the array has 0 dimensions, expected at least 1"));
  EXPECT_THAT(error_of<ValueError>([&] { topk(x, 1, 4); }),
              HasSubstr("topk: k is 4, expected 1 <= k <= 3 (the extent of axis 1 of shape"));
  EXPECT_THAT(error_of<ValueError>([&] { topk(x, -1, 0); }), HasSubstr("topk: k is 0"));
  EXPECT_THAT(error_of<ValueError>([&] { topk(x, -1, 1, "values"); }),
              HasSubstr("topk: ret_typ is 'values', expected one of 'value', 'indices', 'mask', "
                        "'both'"));
  EXPECT_THAT(error_of<TypeError>([&] { argsort(x, -1, false, DType::kUInt8); }),
              HasSubstr("argsort: dtype uint8 is not an index type, expected int32, int64, "
                        "float32 or float64"));
}

}  // namespace
}  // namespace janus
