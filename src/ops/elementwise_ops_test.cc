// Tests of subtract, divide, power, maximum, minimum, the remainders, arctan2, hypot, copysign,
// the comparisons, where and the scalar forms beyond the conformance suite: integer and special
// values, operators, and the errors.
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

using ::testing::HasSubstr;

TEST(OpSubtract, IntegersBroadcastAndOperators) {
  NDArray a = from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray b = from_vector<int32_t>({10, 20, 30}, {3});
  EXPECT_EQ(to_vector<int32_t>(a - b), (std::vector<int32_t>{-9, -18, -27, -6, -15, -24}));
  EXPECT_EQ(to_vector<int32_t>(a - 1.0), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(to_vector<int32_t>(10.0 - b), (std::vector<int32_t>{0, -10, -20}));
  EXPECT_EQ(to_vector<int32_t>(-b), (std::vector<int32_t>{-10, -20, -30}));
  NDArray u = from_vector<uint8_t>({0, 1, 255}, {3});
  EXPECT_EQ(to_vector<uint8_t>(-u), (std::vector<uint8_t>{0, 255, 1}));  // wraps
}

TEST(OpDivide, FloatingOperatorsAndIeeeSpecials) {
  NDArray a = from_vector<double>({1, -2, 0, 3}, {4});
  NDArray z = zeros({4}, DType::kFloat64);
  const std::vector<double> q = to_vector<double>(a / z);
  EXPECT_EQ(q[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(q[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(q[2]));
  EXPECT_EQ(to_vector<double>(a / 2.0), (std::vector<double>{0.5, -1, 0, 1.5}));
  EXPECT_EQ(to_vector<double>(6.0 / from_vector<double>({2, -3}, {2})),
            (std::vector<double>{3, -2}));
  NDArray h = from_vector<float>({1, 3}, {2}, DType::kFloat16);
  EXPECT_EQ(to_vector<float>(h / h), (std::vector<float>{1, 1}));
}

TEST(OpPower, ScalarFormsAndNegativeBase) {
  NDArray a = from_vector<double>({4, 9, -8}, {3});
  const std::vector<double> r = to_vector<double>(power(a, 0.5));
  EXPECT_DOUBLE_EQ(r[0], 2);
  EXPECT_DOUBLE_EQ(r[1], 3);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(to_vector<double>(power(2.0, from_vector<double>({0, 3, -1}, {3}))),
            (std::vector<double>{1, 8, 0.5}));
  EXPECT_EQ(to_vector<double>(power(a, from_vector<double>({2}, {1}))),
            (std::vector<double>{16, 81, 64}));
}

TEST(OpMaximum, NanPropagatesAndIntegersWork) {
  const double nan = std::nan("");
  NDArray a = from_vector<double>({1, nan, 3}, {3});
  NDArray b = from_vector<double>({2, 0, nan}, {3});
  const std::vector<double> mx = to_vector<double>(maximum(a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mx[2]));
  const std::vector<double> mn = to_vector<double>(minimum(a, b));
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_TRUE(std::isnan(mn[2]));
  NDArray i = from_vector<int64_t>({-5, 0, 7}, {3});
  EXPECT_EQ(to_vector<int64_t>(maximum(i, 0.0)), (std::vector<int64_t>{0, 0, 7}));
  EXPECT_EQ(to_vector<int64_t>(minimum(2.0, i)), (std::vector<int64_t>{-5, 0, 2}));
}

TEST(OpMaximum, GradientGoesToTheChosenInputAndToAOnTies) {
  NDArray a = from_vector<double>({1, 5, 2}, {3});
  NDArray b = from_vector<double>({3, 1, 2}, {3});
  autograd::attach_grad(a);
  autograd::attach_grad(b);
  {
    autograd::RecordScope record;
    NDArray y = maximum(a, b);
    autograd::backward(y);
  }
  EXPECT_EQ(to_vector<double>(autograd::grad(a)), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(to_vector<double>(autograd::grad(b)), (std::vector<double>{1, 0, 0}));
}

TEST(OpMod, TakesTheDivisorsSignExactlyAsNumPy) {
  const NDArray a = from_vector<double>({7, -7, 7, -7, 1e20, 6, -6, 5.5}, {8});
  const NDArray b = from_vector<double>({3, 3, -3, -3, 3, 3, 3, -2}, {8});
  // NumPy's np.mod(a, b); 1e20 % 3 is 1 exactly (a - floor(a / b) * b gives 0).
  const std::vector<double> m = to_vector<double>(mod(a, b));
  EXPECT_EQ(m, (std::vector<double>{1, 2, -2, -1, 1, 0, 0, -0.5}));
  EXPECT_FALSE(std::signbit(m[5]));  // 0 takes the divisor's sign
  EXPECT_TRUE(std::signbit(to_vector<double>(mod(a, from_vector<double>({-3}, {1})))[5]));
  EXPECT_EQ(to_vector<double>(fmod(a, b)), (std::vector<double>{1, -1, 1, -1, 1, 0, -0.0, 1.5}));
  const double inf = std::numeric_limits<double>::infinity();
  const NDArray special = from_vector<double>({1, -1, inf, 1}, {4});
  const std::vector<double> s =
      to_vector<double>(mod(special, from_vector<double>({0, inf, 2, -inf}, {4})));
  EXPECT_TRUE(std::isnan(s[0]));  // x % 0
  EXPECT_EQ(s[1], inf);           // -1 % inf, as NumPy
  EXPECT_TRUE(std::isnan(s[2]));  // inf % 2
  EXPECT_EQ(s[3], -inf);
}

TEST(OpMod, IntegersIncludingZeroAndMinusOneDivisors) {
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const NDArray a = from_vector<int32_t>({7, -7, 7, -7, 5, lo, lo}, {7});
  const NDArray b = from_vector<int32_t>({3, 3, -3, -3, 0, -1, 7}, {7});
  EXPECT_EQ(to_vector<int32_t>(mod(a, b)), (std::vector<int32_t>{1, 2, -2, -1, 0, 0, 5}));
  EXPECT_EQ(to_vector<int32_t>(fmod(a, b)), (std::vector<int32_t>{1, -1, 1, -1, 0, 0, -2}));
  const NDArray u = from_vector<uint8_t>({250, 7}, {2});
  EXPECT_EQ(to_vector<uint8_t>(mod(u, from_vector<uint8_t>({7}, {1}))),
            (std::vector<uint8_t>{5, 0}));
  const NDArray i64 = from_vector<int64_t>({-1}, {1});
  EXPECT_EQ(to_vector<int64_t>(mod(i64, from_vector<int64_t>({1000000000000}, {1}))),
            (std::vector<int64_t>{999999999999}));
}

TEST(OpMod, GradientIsOneToAAndMinusTheQuotientToB) {
  NDArray a = from_vector<double>({7, -7}, {2});
  NDArray b = from_vector<double>({3, 3}, {2});
  autograd::attach_grad(a);
  autograd::attach_grad(b);
  {
    autograd::RecordScope record;
    NDArray y = mod(a, b);
    autograd::backward(y);
  }
  EXPECT_EQ(to_vector<double>(autograd::grad(a)), (std::vector<double>{1, 1}));
  EXPECT_EQ(to_vector<double>(autograd::grad(b)), (std::vector<double>{-2, 3}));  // -floor(a / b)
}

TEST(OpArctan2, QuadrantsSignedZerosAndErrors) {
  const NDArray a = from_vector<double>({1, 1, -1, -1, 0, -0.0}, {6});
  const NDArray b = from_vector<double>({1, -1, -1, 1, -1, -1}, {6});
  const std::vector<double> t = to_vector<double>(arctan2(a, b));
  const double pi = std::acos(-1.0);
  EXPECT_DOUBLE_EQ(t[0], pi / 4);
  EXPECT_DOUBLE_EQ(t[1], 3 * pi / 4);
  EXPECT_DOUBLE_EQ(t[2], -3 * pi / 4);
  EXPECT_DOUBLE_EQ(t[3], -pi / 4);
  EXPECT_EQ(t[4], pi);
  EXPECT_EQ(t[5], -pi);
  EXPECT_THAT(
      error_of<TypeError>([] { arctan2(zeros({2}, DType::kInt32), zeros({2}, DType::kInt32)); }),
      HasSubstr("arctan2: input has dtype int32, expected a floating dtype"));
}

TEST(OpHypot, NoOverflowInBetweenAndCopysignKeepsTheSignBit) {
  const NDArray big = from_vector<double>({1e200, 3}, {2});
  const std::vector<double> h = to_vector<double>(hypot(big, from_vector<double>({1e200, 4}, {2})));
  EXPECT_DOUBLE_EQ(h[0], std::sqrt(2.0) * 1e200);
  EXPECT_EQ(h[1], 5);
  const std::vector<double> c = to_vector<double>(
      copysign(from_vector<double>({2, -2, 2}, {3}), from_vector<double>({-0.0, 1, -3}, {3})));
  EXPECT_EQ(c, (std::vector<double>{-2, 2, -2}));
}

TEST(OpCompare, KnownValuesEveryFamilyOfDType) {
  NDArray a = from_vector<int32_t>({1, 2, 3}, {3});
  NDArray b = from_vector<int32_t>({2}, {1});
  NDArray lt = less(a, b);
  EXPECT_EQ(lt.dtype(), DType::kBool);
  EXPECT_EQ(to_vector<int32_t>(lt), (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(to_vector<int32_t>(less_equal(a, b)), (std::vector<int32_t>{1, 1, 0}));
  EXPECT_EQ(to_vector<int32_t>(greater(a, b)), (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(to_vector<int32_t>(greater_equal(a, b)), (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(to_vector<int32_t>(equal(a, b)), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(to_vector<int32_t>(not_equal(a, b)), (std::vector<int32_t>{1, 0, 1}));
  const double nan = std::nan("");
  NDArray f = from_vector<float>({nan, 1}, {2}, DType::kBFloat16);
  EXPECT_EQ(to_vector<int32_t>(equal(f, f)), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(to_vector<int32_t>(not_equal(f, f)), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(equal(zeros({2, 1}), zeros({3})).shape(), (Shape{2, 3}));
}

TEST(OpWhere, ConditionOfAnyDTypeBroadcastsWithBothBranches) {
  NDArray cond = from_vector<float>({0, 2.5, -1}, {3, 1});
  NDArray a = from_vector<int64_t>({1, 2}, {2});
  NDArray b = from_vector<int64_t>({-7}, {});
  NDArray y = where(cond, a, b);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{-7, -7, 1, 2, 1, 2}));
  NDArray x = from_vector<double>({-1, 2, -3}, {3});
  EXPECT_EQ(to_vector<double>(where(greater(x, zeros({}, DType::kFloat64)), x, -x)),
            (std::vector<double>{1, 2, 3}));
}

TEST(OpWhere, GradientSkipsTheCondition) {
  NDArray cond = from_vector<double>({1, 0, 1}, {3});
  NDArray a = from_vector<double>({1, 2, 3}, {3});
  NDArray b = from_vector<double>({5}, {1});
  autograd::attach_grad(cond);
  autograd::attach_grad(a);
  autograd::attach_grad(b);
  {
    autograd::RecordScope record;
    autograd::backward(where(cond, a, b));
  }
  EXPECT_EQ(to_vector<double>(autograd::grad(a)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(to_vector<double>(autograd::grad(b)), (std::vector<double>{1}));
  EXPECT_EQ(to_vector<double>(autograd::grad(cond)), (std::vector<double>{0, 0, 0}));
}

// ---- errors -----------------------------------------------------------------------------------

TEST(OpSubtract, MismatchesAreTypedErrorsNamingTheOperator) {
  EXPECT_THAT(error_of<TypeError>([] { subtract(zeros({2}), zeros({2}, DType::kInt32)); }),
              HasSubstr("subtract: inputs have dtypes float32 and int32, expected the same dtype"));
  EXPECT_THAT(error_of<ShapeError>([] {
                maximum(zeros({2, 3}), zeros({4, 3}));
              }),
              HasSubstr("maximum: shapes [2, 3] and [4, 3] cannot be broadcast together"));
  EXPECT_THAT(error_of<TypeError>([] { less(zeros({2}, DType::kInt64), zeros({2})); }),
              HasSubstr("less: inputs have dtypes int64 and float32"));
}

TEST(OpDivide, IntegerInputsAreRejected) {
  NDArray i = zeros({2}, DType::kInt32);
  EXPECT_THAT(error_of<TypeError>([&] { divide(i, i); }),
              HasSubstr("divide: input has dtype int32, expected a floating dtype"));
  EXPECT_THAT(error_of<TypeError>([&] { i / 2.0; }),
              HasSubstr("divide_scalar: input has dtype int32, expected a floating dtype"));
  EXPECT_THAT(error_of<TypeError>([&] { 2.0 / i; }),
              HasSubstr("rdivide_scalar: input has dtype int32"));
  EXPECT_THAT(error_of<TypeError>([&] { power(i, i); }), HasSubstr("power: input has dtype int32"));
  EXPECT_THAT(error_of<TypeError>([] { power(zeros({1}, DType::kUInt8), 2.0); }),
              HasSubstr("power_scalar: input has dtype uint8"));
}

TEST(OpWhere, BranchDTypesMustMatchAndShapesBroadcast) {
  EXPECT_THAT(error_of<TypeError>(
                  [] { where(zeros({2}, DType::kBool), zeros({2}), zeros({2}, DType::kFloat64)); }),
              HasSubstr("where: a and b have dtypes float32 and float64, expected the same dtype"));
  EXPECT_THAT(error_of<ShapeError>([] {
                where(zeros({3}), zeros({2, 1}), zeros({4, 1}));
              }),
              HasSubstr("where: shapes [2, 1] and [4, 1] cannot be broadcast together"));
  EXPECT_THAT(error_of<ShapeError>([] {
                where(zeros({3}), zeros({2, 1}), zeros({2, 4}));
              }),
              HasSubstr("where: shapes [3] and [2, 4] cannot be broadcast together"));
}

}  // namespace
}  // namespace janus
