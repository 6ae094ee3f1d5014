// Tests of the creation operators: zeros, ones, full and arange.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

const Shape kShapes[] = {
    Shape{},        Shape{0},          Shape{1},       Shape{7}, Shape{3, 4},
    Shape{2, 0, 3}, Shape{2, 3, 4, 5}, Shape{300, 400}};  // 120000 elements: split among intra-op
                                                          // threads

void expect_all_equal(const NDArray& a, double value) {
  const std::vector<double> v = to_vector<double>(a);
  ASSERT_EQ(static_cast<int64_t>(v.size()), a.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(value)) {
      ASSERT_TRUE(std::isnan(v[i])) << "element " << i;
    } else {
      ASSERT_EQ(v[i], value) << "element " << i;
    }
  }
}

// ---- zeros, ones, full ------------------------------------------------------------------------

TEST(OpZeros, EveryDTypeAndShape) {
  for (DType dt : kAllDTypes) {
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(fmt::format("{} {}", s, dt));
      NDArray a = zeros(s, dt);
      EXPECT_EQ(a.shape(), s);
      EXPECT_EQ(a.dtype(), dt);
      EXPECT_EQ(a.device(), cpu(0));
      expect_all_equal(a, 0.0);
    }
  }
}

TEST(OpZeros, Defaults) {
  NDArray a = zeros({2, 2});
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.device(), cpu(0));
  EXPECT_EQ(to_vector<float>(a), (std::vector<float>{0, 0, 0, 0}));
}

TEST(OpOnes, EveryDTypeAndShape) {
  for (DType dt : kAllDTypes) {
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(fmt::format("{} {}", s, dt));
      NDArray a = ones(s, dt);
      EXPECT_EQ(a.shape(), s);
      EXPECT_EQ(a.dtype(), dt);
      expect_all_equal(a, 1.0);
    }
  }
  EXPECT_EQ(to_vector<uint8_t>(ones({3}, DType::kBool)), (std::vector<uint8_t>{1, 1, 1}));
}

TEST(OpFull, ValuesConvertedToTheDType) {
  struct Case {
    double value;
    DType dtype;
    double expected;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const Case& c :
       {Case{2.5, DType::kFloat32, 2.5}, Case{-1e300, DType::kFloat64, -1e300},
        Case{0.1, DType::kFloat64, 0.1}, Case{0.1, DType::kFloat32, static_cast<double>(0.1f)},
        Case{2.5, DType::kFloat16, 2.5}, Case{1e5, DType::kFloat16, inf},
        Case{0.1, DType::kFloat16, static_cast<double>(float(float16(0.1f)))},
        Case{3.140625, DType::kBFloat16, 3.140625}, Case{2.7, DType::kInt32, 2},
        Case{-3.7, DType::kInt32, -3}, Case{-9e15, DType::kInt64, -9e15},
        Case{200, DType::kUInt8, 200}, Case{0.5, DType::kBool, 1}, Case{0.0, DType::kBool, 0},
        Case{-inf, DType::kFloat32, -inf}}) {
    SCOPED_TRACE(fmt::format("full({}) as {}", c.value, c.dtype));
    NDArray a = full({5, 3}, c.value, c.dtype);
    EXPECT_EQ(a.dtype(), c.dtype);
    expect_all_equal(a, c.expected);
  }
  expect_all_equal(full({4}, std::nan(""), DType::kFloat32), std::nan(""));
  expect_all_equal(full({300, 400}, -7.25, DType::kFloat64), -7.25);
  expect_all_equal(full({}, 3.0), 3.0);
  EXPECT_EQ(full({0, 3}, 1.0).size(), 0);
}

TEST(OpCreation, NegativeExtentsAreRejected) {
  EXPECT_THAT(error_of<ShapeError>([] {
                zeros({2, -1});
              }),
              HasSubstr("zeros: shape [2, -1] has a negative extent at axis 1"));
  EXPECT_THAT(error_of<ShapeError>([] { ones({-3}); }),
              HasSubstr("ones: shape [-3] has a negative extent at axis 0"));
  EXPECT_THAT(error_of<ShapeError>([] {
                full({1, 2, -5}, 1.0);
              }),
              HasSubstr("full: shape [1, 2, -5] has a negative extent at axis 2"));
}

TEST(OpCreation, UnknownDevicesAreRejected) {
  const int n = num_cpu_devices();
  std::string msg = error_of<DeviceError>([&] { zeros({2}, DType::kFloat32, cpu(n)); });
  EXPECT_THAT(msg, HasSubstr(fmt::format("zeros: device cpu({}) does not exist", n)));
  msg = error_of<DeviceError>([] { ones({2}, DType::kFloat32, gpu(0)); });
  EXPECT_THAT(msg, HasSubstr("ones: device gpu(0) is not available"));
  msg = error_of<DeviceError>([] { full({2}, 1.0, DType::kFloat32, gpu(1)); });
  EXPECT_THAT(msg, HasSubstr("full: device gpu(1) is not available"));
  msg = error_of<DeviceError>([&] { arange(0, 3, 1, DType::kFloat32, cpu(n + 1)); });
  EXPECT_THAT(msg, HasSubstr(fmt::format("arange: device cpu({}) does not exist", n + 1)));
}

TEST(OpCreation, ResultsAreIndependentArrays) {
  NDArray a = zeros({4});
  NDArray b = zeros({4});
  EXPECT_FALSE(a.is_same(b));
  EXPECT_NE(a.var(), b.var());
  EXPECT_NE(a.raw_data(), b.raw_data());
}

// ---- arange -----------------------------------------------------------------------------------

// The reference: NumPy's length ceil((stop - start) / step), values start + i * step.
std::vector<double> arange_reference(double start, double stop, double step) {
  const double count = std::ceil((stop - start) / step);
  std::vector<double> v;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
    v.push_back(start + static_cast<double>(i) * step);
  }
  return v;
}

TEST(OpArange, Float64MatchesReference) {
  struct Case {
    double start, stop, step;
  };
  for (const Case& c :
       {Case{0, 5, 1}, Case{1, 2, 0.25}, Case{0, 1, 0.1}, Case{5, 0, -1}, Case{0, -3, -0.5},
        Case{-2.5, 2.5, 0.7}, Case{0, 1, 0.3}, Case{10, 10.5, 0.5}, Case{0, 100000, 1}}) {
    SCOPED_TRACE(fmt::format("arange({}, {}, {})", c.start, c.stop, c.step));
    NDArray a = arange(c.start, c.stop, c.step, DType::kFloat64);
    const std::vector<double> expected = arange_reference(c.start, c.stop, c.step);
    EXPECT_EQ(a.shape(), (Shape{static_cast<int64_t>(expected.size())}));
    EXPECT_EQ(to_vector<double>(a), expected);
  }
}

TEST(OpArange, KnownLengthsAndValues) {
  EXPECT_EQ(to_vector<float>(arange(0, 5)), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(to_vector<float>(arange(1, 2, 0.25)), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(to_vector<float>(arange(5, 0, -1)), (std::vector<float>{5, 4, 3, 2, 1}));
  EXPECT_EQ(to_vector<float>(arange(0, -3, -0.5)),
            (std::vector<float>{0, -0.5, -1, -1.5, -2, -2.5}));
  EXPECT_EQ(arange(0, 1, 0.1).size(), 10);
  EXPECT_EQ(arange(0, 1.05, 0.1).size(), 11);
  EXPECT_EQ(arange(0, 10, 3).size(), 4);  // 0, 3, 6, 9
  NDArray d = arange(0, 3);
  EXPECT_EQ(d.dtype(), DType::kFloat32);
  EXPECT_EQ(d.device(), cpu(0));
  EXPECT_EQ(d.ndim(), 1);
}

TEST(OpArange, EmptyResults) {
  for (NDArray a : {arange(3, 3), arange(5, 0), arange(0, 5, -1), arange(-1, -1, -0.5)}) {
    EXPECT_EQ(a.shape(), (Shape{0}));
    EXPECT_TRUE(to_vector<float>(a).empty());
  }
}

TEST(OpArange, IntegerAndHalfDTypes) {
  EXPECT_EQ(to_vector<int32_t>(arange(0, 10, 3, DType::kInt32)),
            (std::vector<int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(to_vector<int64_t>(arange(4, -4, -2, DType::kInt64)),
            (std::vector<int64_t>{4, 2, 0, -2}));
  EXPECT_EQ(to_vector<int64_t>(arange(0, 5, 1, DType::kUInt8)),
            (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // float16 holds every integer up to 2048 exactly.
  const std::vector<float> h = to_vector<float>(arange(0, 2049, 1, DType::kFloat16));
  ASSERT_EQ(h.size(), 2049u);
  for (size_t i = 0; i < h.size(); ++i) ASSERT_EQ(h[i], static_cast<float>(i));
  const std::vector<float> b = to_vector<float>(arange(0, 1, 0.125, DType::kBFloat16));
  EXPECT_EQ(b, (std::vector<float>{0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875}));
}

TEST(OpArange, BadStepsAndBoundsAreRejected) {
  EXPECT_THAT(error_of<ValueError>([] { arange(0, 5, 0); }),
              HasSubstr("arange: step is 0, expected a finite non-zero number"));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(error_of<ValueError>([&] { arange(0, 5, inf); }),
              HasSubstr("arange: step is inf, expected a finite non-zero number"));
  EXPECT_THAT(error_of<ValueError>([] { arange(0, 5, std::nan("")); }),
              HasSubstr("arange: step is nan"));
  EXPECT_THAT(error_of<ValueError>([&] { arange(0, inf); }),
              HasSubstr("arange: start 0 and stop inf must be finite"));
  EXPECT_THAT(error_of<ValueError>([&] { arange(-inf, 0); }),
              HasSubstr("arange: start -inf and stop 0 must be finite"));
}

}  // namespace
}  // namespace janus
