// Tests of mean, max, min, prod, norm, logsumexp, argmax and argmin beyond the conformance
// specs: NaN, ties, overflow, integer dtypes and the messages of their errors.
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
using ::testing::HasSubstr;

NDArray vec(std::vector<double> v, Shape s, DType dtype = DType::kFloat64) {
  return from_vector<double>(v, s, dtype);
}

TEST(OpReduction, AxisOutOfRangeNamesOperatorAxisAndRank) {
  const NDArray x = zeros({2, 3});
  const std::string msg = error_of<IndexError>([&] { mean(x, {2}); });
  EXPECT_THAT(msg, HasSubstr("mean: axis 2 is out of range for an array of 2 dimensions"));
  EXPECT_THAT(msg, HasSubstr("expected in [-2, 2)"));
  EXPECT_THAT(error_of<IndexError>([&] { max(x, {-3}); }), HasSubstr("max: axis -3"));
  EXPECT_THAT(error_of<IndexError>([&] { argmin(x, 5); }), HasSubstr("argmin: axis 5"));
  EXPECT_THAT(error_of<IndexError>([&] { logsumexp(x, {0, 7}); }), HasSubstr("logsumexp: axis 7"));
}

// Reductions whose last axes are kept fold a strip of outputs a row at a time; each output
// must still fold its elements in row-major order: bitwise the sum of a plain loop, across
// strips (1100 columns), threads and reduced axes that are not adjacent.
TEST(OpReduction, KeptTrailingAxesSumInRowMajorOrderBitwise) {
  const int64_t a = 3, b = 70, c = 1100;
  std::vector<float> v(static_cast<size_t>(a * b * c));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 1e3);
  const NDArray x = from_vector<float>(v, {a, b, c});
  const std::vector<float> s01 = to_vector<float>(sum(x, {0, 1}));
  const std::vector<float> s1 = to_vector<float>(sum(x, {1}, /*keepdims=*/true));
  ASSERT_EQ(s01.size(), static_cast<size_t>(c));
  ASSERT_EQ(s1.size(), static_cast<size_t>(a * c));
  for (int64_t k = 0; k < c; ++k) {
    double all = 0.0;
    for (int64_t i = 0; i < a; ++i) {
      double part = 0.0;
      for (int64_t j = 0; j < b; ++j) {
        const double e = v[static_cast<size_t>((i * b + j) * c + k)];
        all += e;
        part += e;
      }
      ASSERT_EQ(s1[static_cast<size_t>(i * c + k)], static_cast<float>(part)) << i << "," << k;
    }
    ASSERT_EQ(s01[static_cast<size_t>(k)], static_cast<float>(all)) << k;
  }
  // Axes 0 and 2 of [2, 3, 4, 5]: kept axis 1 between them, axis 3 after.
  const NDArray y = from_vector<double>(std::vector<double>(120, 0.5), {2, 3, 4, 5});
  EXPECT_THAT(to_vector<double>(max(y, {0, 2})), ::testing::Each(0.5));
  EXPECT_THAT(to_vector<double>(sum(y, {0, 2})), ::testing::Each(4.0));
  EXPECT_EQ(sum(y, {0, 2}).shape(), Shape({3, 5}));
}

TEST(OpReduction, MaxOverNoElementsIsValueError) {
  const NDArray x = zeros({0, 3});
  const std::string msg = error_of<ValueError>([&] { max(x, {0}); });
  EXPECT_THAT(msg, HasSubstr("max: reducing shape [0, 3] over axes 0"));
  EXPECT_THAT(error_of<ValueError>([&] { argmax(x, 0); }), HasSubstr("argmax"));
  EXPECT_EQ(max(x, {1}).shape(), Shape({0}));  // nothing to reduce into: fine
}

TEST(OpReduction, MaxAndArgmaxPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray x = vec({1, nan, 3, 4, 5, 6}, {2, 3});
  const std::vector<double> m = to_vector<double>(max(x, {1}));
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 6);
  EXPECT_THAT(to_vector<int64_t>(argmax(x, 1)), ElementsAre(1, 2));
  EXPECT_THAT(to_vector<int64_t>(argmin(x, 1)), ElementsAre(1, 0));
}

TEST(OpReduction, ArgmaxTakesTheFirstOfTiesAndKeepsDims) {
  const NDArray x = vec({2, 7, 7, 1, 1, 0}, {2, 3}, DType::kInt32);
  const NDArray a = argmax(x, -1, /*keepdims=*/true);
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(a.shape(), Shape({2, 1}));
  EXPECT_THAT(to_vector<int64_t>(a), ElementsAre(1, 0));
  EXPECT_THAT(to_vector<int64_t>(argmin(x, 0)), ElementsAre(1, 1, 1));
}

TEST(OpReduction, IntegerMaxMinProdMean) {
  const NDArray x = vec({-3, 5, 2, 4, -1, 6}, {2, 3}, DType::kInt64);
  EXPECT_THAT(to_vector<int64_t>(max(x, {0})), ElementsAre(4, 5, 6));
  EXPECT_THAT(to_vector<int64_t>(min(x)), ElementsAre(-3));
  EXPECT_THAT(to_vector<int64_t>(prod(x, {1})), ElementsAre(-30, -24));
  EXPECT_THAT(to_vector<int64_t>(mean(x, {1})), ElementsAre(1, 3));  // 4/3, 9/3
}

TEST(OpReduction, LogsumexpDoesNotOverflow) {
  const NDArray x =
      vec({1000, 1000, -1000, -std::numeric_limits<double>::infinity()}, {2, 2}, DType::kFloat32);
  const std::vector<double> y = to_vector<double>(logsumexp(x, {1}));
  EXPECT_NEAR(y[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_NEAR(y[1], -1000, 1e-3);
  const std::vector<double> all_neg_inf =
      to_vector<double>(logsumexp(full({3}, -std::numeric_limits<double>::infinity())));
  EXPECT_EQ(all_neg_inf[0], -std::numeric_limits<double>::infinity());
}

TEST(OpReduction, NormAndLogsumexpNeedFloatingInput) {
  const NDArray x = zeros({2}, DType::kInt32);
  EXPECT_THAT(error_of<TypeError>([&] { norm(x); }),
              HasSubstr("norm: input has dtype int32, expected a floating dtype"));
  EXPECT_THAT(error_of<TypeError>([&] { logsumexp(x); }),
              HasSubstr("logsumexp: input has dtype int32"));
}

TEST(OpReduction, NormSupportsOnlyOrd2) {
  EXPECT_THAT(error_of<NotImplementedError>([&] { norm(zeros({2}), {}, false, 1); }),
              HasSubstr("norm: ord 1 is not supported, expected 2"));
}

TEST(OpReduction, NormGradientAtZeroIsZero) {
  NDArray x = zeros({3}, DType::kFloat64);
  autograd::attach_grad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = norm(x);
  }
  autograd::backward(y);
  EXPECT_THAT(to_vector<double>(autograd::grad(x)), ElementsAre(0, 0, 0));
}

TEST(OpReduction, MaxGradientGoesToTheFirstOfTies) {
  NDArray x = vec({1, 3, 3, 2}, {4});
  autograd::attach_grad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = max(x);
  }
  autograd::backward(y);
  EXPECT_THAT(to_vector<double>(autograd::grad(x)), ElementsAre(0, 1, 0, 0));
}

}  // namespace
}  // namespace janus
