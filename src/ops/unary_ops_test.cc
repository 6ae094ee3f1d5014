// Tests of the unary operators beyond the conformance suite: integer dtypes, special values,
// casts, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

TEST(OpUnary, IntegerDTypes) {
  NDArray i = from_vector<int32_t>({-3, 0, 4}, {3});
  EXPECT_EQ(to_vector<int32_t>(abs(i)), (std::vector<int32_t>{3, 0, 4}));
  EXPECT_EQ(to_vector<int32_t>(negative(i)), (std::vector<int32_t>{3, 0, -4}));
  EXPECT_EQ(to_vector<int32_t>(square(i)), (std::vector<int32_t>{9, 0, 16}));
  EXPECT_EQ(to_vector<int32_t>(sign(i)), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(to_vector<int32_t>(relu(i)), (std::vector<int32_t>{0, 0, 4}));
  EXPECT_EQ(to_vector<int32_t>(clip(i, -1.0, 2.0)), (std::vector<int32_t>{-1, 0, 2}));
  NDArray u = from_vector<uint8_t>({0, 7}, {2});
  EXPECT_EQ(to_vector<uint8_t>(sign(u)), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(to_vector<uint8_t>(abs(u)), (std::vector<uint8_t>{0, 7}));
}

// negative, abs and square wrap around at the ends of the signed ranges, as in NumPy, instead of
// overflowing (undefined behaviour in C++: the AddressSanitizer+UBSan build stops on it).
TEST(OpUnary, SignedIntegersWrapAroundAsInNumPy) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  const NDArray i = from_vector<int32_t>({kMin32, kMax32, -5, 65536, 46341}, {5});
  EXPECT_EQ(to_vector<int32_t>(negative(i)),
            (std::vector<int32_t>{kMin32, -kMax32, 5, -65536, -46341}));
  EXPECT_EQ(to_vector<int32_t>(abs(i)), (std::vector<int32_t>{kMin32, kMax32, 5, 65536, 46341}));
  // 65536^2 = 2^32 wraps to 0; 46341^2 = 2147488281 wraps to 2147488281 - 2^32.
  EXPECT_EQ(to_vector<int32_t>(square(i)), (std::vector<int32_t>{0, 1, 25, 0, -2147479015}));
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  const NDArray l = from_vector<int64_t>({kMin64, int64_t{1} << 32, -3}, {3});
  EXPECT_EQ(to_vector<int64_t>(negative(l)),
            (std::vector<int64_t>{kMin64, -(int64_t{1} << 32), 3}));
  EXPECT_EQ(to_vector<int64_t>(abs(l)), (std::vector<int64_t>{kMin64, int64_t{1} << 32, 3}));
  EXPECT_EQ(to_vector<int64_t>(square(l)), (std::vector<int64_t>{0, 0, 9}));
}

TEST(OpUnary, SpecialFloatValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  NDArray x = from_vector<double>({-inf, -1000, 0, 1000, inf, nan}, {6});
  const std::vector<double> s = to_vector<double>(sigmoid(x));
  EXPECT_EQ(s[0], 0);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s[2], 0.5);
  EXPECT_EQ(s[3], 1);
  EXPECT_EQ(s[4], 1);
  EXPECT_TRUE(std::isnan(s[5]));
  const std::vector<double> sp = to_vector<double>(softplus(x));
  EXPECT_EQ(sp[1], 0);
  EXPECT_DOUBLE_EQ(sp[2], std::log(2.0));
  EXPECT_EQ(sp[3], 1000);  // no overflow
  EXPECT_TRUE(std::isnan(to_vector<double>(relu(x))[5]));
  EXPECT_TRUE(std::isnan(to_vector<double>(sign(x))[5]));
  EXPECT_TRUE(std::isnan(to_vector<double>(clip(x, -1, 1))[5]));
  EXPECT_EQ(to_vector<double>(log(zeros({1}, DType::kFloat64)))[0], -inf);
  NDArray h = from_vector<float>({0.25f, 4.0f}, {2}, DType::kFloat16);
  EXPECT_EQ(to_vector<float>(sqrt(h)), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(to_vector<float>(rsqrt(h)), (std::vector<float>{2.0f, 0.5f}));
}

// float32 exp, sigmoid and tanh run a vectorized loop with a scalar remainder
// (unary/vector_math.h): both must agree with float64 to a few ulp, keep NaN and the infinities,
// and give the same bits whether an element falls in the vector body or the remainder (so
// results do not depend on how threads split the array).
TEST(OpUnary, Float32ExpSigmoidTanhAgainstFloat64) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> special = {-inf,   inf,   nan,    -0.0f,  0.0f,    1e-30f,  -1e-30f, 1e-4f,
                                -1e-4f, 0.34f, -0.35f, 9.0f,   -9.0f,   17.5f,   -18.5f,  88.7f,
                                88.8f,  89.5f, -87.3f, -87.4f, -100.0f, -103.9f, -104.5f, -200.0f};
  for (int i = 0; i < 400; ++i) special.push_back(-120.0f + 0.55f * static_cast<float>(i));
  struct Case {
    NDArray (*op)(const NDArray&);
    double (*ref)(double);
  };
  const Case cases[] = {
      {exp, [](double x) { return std::exp(x); }},
      {sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {tanh, [](double x) { return std::tanh(x); }},
  };
  for (const Case& c : cases) {
    // Odd lengths: each element in turn lands in a vector body and in a remainder.
    for (int64_t len :
         {int64_t{1}, int64_t{7}, int64_t{17}, int64_t{67}, static_cast<int64_t>(special.size())}) {
      for (size_t start = 0; start + static_cast<size_t>(len) <= special.size();
           start += static_cast<size_t>(len)) {
        const std::vector<float> x(special.begin() + static_cast<std::ptrdiff_t>(start),
                                   special.begin() + static_cast<std::ptrdiff_t>(start) + len);
        const std::vector<float> y = to_vector<float>(c.op(from_vector<float>(x, {len})));
        for (size_t i = 0; i < x.size(); ++i) {
          const double want = static_cast<float>(c.ref(x[i]));  // inf where float overflows
          SCOPED_TRACE(testing::Message() << "x = " << x[i] << ", length " << len);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(y[i]));
          } else if (std::isinf(want) || want == 0) {
            EXPECT_EQ(y[i], want);
            EXPECT_EQ(std::signbit(y[i]), std::signbit(want));
          } else {
            // 4 ulp, or within the smallest subnormal where the result is subnormal.
            EXPECT_LE(std::fabs(y[i] - want), std::max(4 * 0x1p-24 * std::fabs(want), 0x1p-149));
          }
          if (len == 67) {  // each element also alone, in the scalar remainder only
            const float alone = to_vector<float>(c.op(from_vector<float>({x[i]}, {1})))[0];
            EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(alone));
          }
        }
      }
    }
  }
}

TEST(OpLeakyRelu, DefaultAndGivenSlope) {
  NDArray x = from_vector<double>({-2, 3}, {2});
  EXPECT_EQ(to_vector<double>(leaky_relu(x)), (std::vector<double>{-0.02, 3}));
  EXPECT_EQ(to_vector<double>(leaky_relu(x, 0.5)), (std::vector<double>{-1, 3}));
}

TEST(OpCast, ConversionsTruncateSaturateAndWrap) {
  const double nan = std::nan("");
  NDArray f = from_vector<double>({-2.7, 2.7, 1e20, -1e20, nan, 0}, {6});
  EXPECT_EQ(to_vector<int32_t>(cast(f, DType::kInt32)),
            (std::vector<int32_t>{-2, 2, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0, 0}));
  EXPECT_EQ(to_vector<int32_t>(cast(f, DType::kBool)), (std::vector<int32_t>{1, 1, 1, 1, 1, 0}));
  NDArray big = from_vector<int64_t>({(int64_t{1} << 53) + 1, 300}, {2});
  EXPECT_EQ(to_vector<int64_t>(cast(big, DType::kInt64)),
            (std::vector<int64_t>{(int64_t{1} << 53) + 1, 300}));  // exact, not through double
  EXPECT_EQ(to_vector<int32_t>(cast(big, DType::kUInt8)), (std::vector<int32_t>{1, 44}));
  NDArray h = cast(from_vector<double>({1.0 / 3}, {1}), DType::kFloat16);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_NEAR(to_vector<double>(h)[0], 1.0 / 3, 1e-3);
  EXPECT_EQ(cast(zeros({2, 0}), DType::kInt64).shape(), (Shape{2, 0}));
}

TEST(OpCast, GradientIsCastBackToTheInputDType) {
  NDArray x = from_vector<double>({1, 2}, {2});
  autograd::attach_grad(x);
  {
    autograd::RecordScope record;
    NDArray y = cast(x, DType::kFloat32);
    EXPECT_EQ(y.dtype(), DType::kFloat32);
    autograd::backward(y * 3.0);
  }
  NDArray g = autograd::grad(x);
  EXPECT_EQ(g.dtype(), DType::kFloat64);
  EXPECT_EQ(to_vector<double>(g), (std::vector<double>{3, 3}));
}

TEST(OpClip, GradientPassesInsideTheBoundsOnly) {
  NDArray x = from_vector<double>({-2, -0.5, 0.5, 2}, {4});
  autograd::attach_grad(x);
  {
    autograd::RecordScope record;
    autograd::backward(clip(x, -1, 1));
  }
  EXPECT_EQ(to_vector<double>(autograd::grad(x)), (std::vector<double>{0, 1, 1, 0}));
}

// ---- errors -----------------------------------------------------------------------------------

// relu's gradient is one relu_backward(y, dy) pass; where relu passed a NaN through, the
// gradient passes too (PyTorch's rule, docs/design/numerics.md); at 0 it does not; mismatched
// operands are named.
TEST(OpReluBackward, MasksByTheOutputAndNamesBadOperands) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const NDArray x = from_vector<float>({-1.0f, 0.0f, 2.0f, nan}, {4});
  autograd::attach_grad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    y = relu(x);
  }
  const NDArray head_grad = from_vector<float>({5.0f, 6.0f, 7.0f, 8.0f}, {4});
  autograd::backward({&y, 1}, {&head_grad, 1});
  EXPECT_EQ(to_vector<float>(autograd::grad(x)), (std::vector<float>{0.0f, 0.0f, 7.0f, 8.0f}));
  const ops::OpDef& op = ops::get_op("relu_backward");
  EXPECT_THAT(error_of<ShapeError>([&] {
                ops::invoke(op, {ones({2, 3}), ones({3, 2})});
              }),
              HasSubstr("relu_backward: y has shape [2, 3] but dy has shape [3, 2]"));
  EXPECT_THAT(error_of<TypeError>([&] {
                ops::invoke(op, {ones({2}), ones({2}, DType::kFloat64)});
              }),
              HasSubstr("relu_backward: y is float32 but dy is float64"));
}

TEST(OpUnary, FloatingOnlyOperatorsRejectIntegers) {
  NDArray i = zeros({2}, DType::kInt32);
  EXPECT_THAT(error_of<TypeError>([&] { exp(i); }),
              HasSubstr("exp: input has dtype int32, expected a floating dtype"));
  EXPECT_THAT(error_of<TypeError>([&] { log(i); }), HasSubstr("log: input has dtype int32"));
  EXPECT_THAT(error_of<TypeError>([] { sigmoid(zeros({2}, DType::kBool)); }),
              HasSubstr("sigmoid: input has dtype bool"));
  EXPECT_THAT(error_of<TypeError>([] { leaky_relu(zeros({2}, DType::kInt64)); }),
              HasSubstr("leaky_relu: input has dtype int64"));
}

TEST(OpClip, BoundsOutOfOrderAreAValueError) {
  EXPECT_THAT(error_of<ValueError>([] { clip(zeros({2}), 1.0, -1.0); }),
              HasSubstr("clip: a_min 1 is greater than a_max -1"));
}

TEST(OpSign, BackwardThroughItIsNotImplemented) {
  NDArray x = from_vector<double>({1, -2}, {2});
  autograd::attach_grad(x);
  autograd::RecordScope record;
  NDArray y = sign(x);
  EXPECT_THAT(error_of<NotImplementedError>([&] { autograd::backward(y); }), HasSubstr("sign"));
}

NDArray unary_by_name(const char* name, const NDArray& x) {
  return ops::invoke(ops::get_op(name), {x})[0];
}

// Halves go to the even neighbour (NumPy's rint and around); nan, inf and -0.0 stay.
TEST(OpRounding, FloatingValuesAsInNumPy) {
  const double inf = std::numeric_limits<double>::infinity();
  NDArray x = from_vector<double>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 2.3, inf, NAN}, {10});
  const std::vector<double> rint = to_vector<double>(unary_by_name("rint", x));
  const std::vector<double> floor = to_vector<double>(unary_by_name("floor", x));
  const std::vector<double> ceil = to_vector<double>(unary_by_name("ceil", x));
  const std::vector<double> want_rint = {-2, -2, -0.0, 0, 2, 2, -1, 2, inf};
  const std::vector<double> want_floor = {-3, -2, -1, 0, 1, 2, -1, 2, inf};
  const std::vector<double> want_ceil = {-2, -1, -0.0, 1, 2, 3, -0.0, 3, inf};
  for (size_t i = 0; i < want_rint.size(); ++i) {
    EXPECT_EQ(rint[i], want_rint[i]) << i;
    EXPECT_EQ(floor[i], want_floor[i]) << i;
    EXPECT_EQ(ceil[i], want_ceil[i]) << i;
  }
  EXPECT_TRUE(std::signbit(rint[2]));
  EXPECT_TRUE(std::signbit(ceil[6]));
  EXPECT_TRUE(std::isnan(rint[9]) && std::isnan(floor[9]) && std::isnan(ceil[9]));
  NDArray f = from_vector<float>({2.5F, -3.5F, 1e30F}, {3});
  EXPECT_EQ(to_vector<float>(unary_by_name("rint", f)), (std::vector<float>{2, -4, 1e30F}));
}

TEST(OpRounding, IntegersPassUnchanged) {
  NDArray i = from_vector<int64_t>({-3, 0, 9007199254740993}, {3});
  for (const char* name : {"floor", "ceil", "rint"}) {
    NDArray y = unary_by_name(name, i);
    EXPECT_EQ(y.dtype(), DType::kInt64) << name;
    EXPECT_EQ(to_vector<int64_t>(y), (std::vector<int64_t>{-3, 0, 9007199254740993})) << name;
  }
}

// The gradient is zero, not an error: a loss through a rounding still trains the rest.
TEST(OpRounding, GradientIsZero) {
  for (const char* name : {"floor", "ceil", "rint"}) {
    NDArray x = from_vector<double>({0.3, -1.7}, {2});
    autograd::attach_grad(x);
    {
      autograd::RecordScope record;
      autograd::backward(unary_by_name(name, x) * 3.0 + x);
    }
    EXPECT_EQ(to_vector<double>(autograd::grad(x)), (std::vector<double>{1, 1})) << name;
  }
}

// Outside their domains the inverse functions and logarithms give nan (or inf), as NumPy.
TEST(OpTrigLog, DomainEdgesAsInNumPy) {
  NDArray x = from_vector<double>({2.0, -1.0, 0.0, 1.0, -8.0}, {5});
  auto at = [&](const char* name) { return to_vector<double>(unary_by_name(name, x)); };
  EXPECT_TRUE(std::isnan(at("arcsin")[0]) && std::isnan(at("arccos")[0]));
  EXPECT_TRUE(std::isnan(at("arccosh")[1]));
  EXPECT_EQ(at("arctanh")[3], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(at("log2")[1]) && std::isnan(at("log10")[1]));
  EXPECT_EQ(at("log2")[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(at("cbrt")[4], -2.0);
  EXPECT_EQ(at("log10")[3], 0.0);
  EXPECT_THAT(error_of<TypeError>([] { unary_by_name("tan", from_vector<int32_t>({1}, {1})); }),
              HasSubstr("tan"));
}

}  // namespace
}  // namespace janus
