// Tests of the creation operators linspace and eye: values against NumPy's (computed with
// NumPy 2.4 and written here with every digit), dtypes, shapes, defaults and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

// ---- linspace ---------------------------------------------------------------------------------

TEST(OpLinspace, Float64MatchesNumPyExactly) {
  struct Case {
    double start, stop;
    int64_t num;
    bool endpoint;
    std::vector<double> numpy;  // np.linspace(start, stop, num, endpoint=endpoint)
  };
  const Case cases[] = {
      {0, 1, 5, true, {0.0, 0.25, 0.5, 0.75, 1.0}},
      {0, 1, 5, false, {0.0, 0.2, 0.4, 0.6000000000000001, 0.8}},
      {-2.5,
       7.3,
       11,
       true,
       {-2.5, -1.52, -0.5399999999999998, 0.4400000000000004, 1.4200000000000004,
        2.4000000000000004, 3.380000000000001, 4.36, 5.340000000000001, 6.32, 7.3}},
      {1,
       0,
       7,
       false,
       {1.0, 0.8571428571428572, 0.7142857142857143, 0.5714285714285714, 0.4285714285714286,
        0.2857142857142858, 0.1428571428571429}},
      {0.1,
       0.7,
       13,
       true,
       {0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.44999999999999996, 0.5, 0.5499999999999999, 0.6,
        0.6499999999999999, 0.7}},
      {0.0,
       1.0,
       10,
       false,
       {0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8,
        0.9}},
      {3, 3, 4, true, {3.0, 3.0, 3.0, 3.0}},
      {2, 5, 1, true, {2.0}},  // num = 1: [start], whatever the endpoint
      {2, 5, 1, false, {2.0}},
      {0, 1, 0, true, {}},  // num = 0: empty
      {0, 1, 0, false, {}},
      {-1e300, 1e300, 5, true, {-1e300, -5e299, 0.0, 5e299, 1e300}},
      // The step underflows to zero: NumPy divides i by num - 1 first (gh-5437).
      {0, 1e-323, 6, true, {0.0, 0.0, 5e-324, 5e-324, 1e-323, 1e-323}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(
        fmt::format("linspace({}, {}, {}, endpoint={})", c.start, c.stop, c.num, c.endpoint));
    NDArray a = linspace(c.start, c.stop, c.num, c.endpoint, DType::kFloat64);
    EXPECT_EQ(a.shape(), (Shape{c.num}));
    EXPECT_EQ(a.dtype(), DType::kFloat64);
    EXPECT_EQ(to_vector<double>(a), c.numpy);
  }
}

TEST(OpLinspace, OtherDTypes) {
  // np.linspace(0, 1, 7, dtype=np.float32)
  EXPECT_EQ(to_vector<float>(linspace(0, 1, 7)),
            (std::vector<float>{0.0f, 0.1666666716337204f, 0.3333333432674408f, 0.5f,
                                0.6666666865348816f, 0.8333333134651184f, 1.0f}));
  // Integer dtypes take the floor, as NumPy >= 2.0 does: np.linspace(-3, 3, 5, dtype=np.int64)
  // is [-3, -2, 0, 1, 3] (from -3, -1.5, 0, 1.5, 3).
  EXPECT_EQ(to_vector<int64_t>(linspace(-3, 3, 5, true, DType::kInt64)),
            (std::vector<int64_t>{-3, -2, 0, 1, 3}));
  EXPECT_EQ(to_vector<int32_t>(linspace(-1, 1, 4, false, DType::kInt32)),
            (std::vector<int32_t>{-1, -1, 0, 0}));
  EXPECT_EQ(to_vector<uint8_t>(linspace(0, 255, 4, true, DType::kUInt8)),
            (std::vector<uint8_t>{0, 85, 170, 255}));
  EXPECT_EQ(to_vector<float>(linspace(0, 1, 5, true, DType::kFloat16)),
            (std::vector<float>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(to_vector<float>(linspace(-1, 1, 4, false, DType::kBFloat16)),
            (std::vector<float>{-1, -0.5, 0, 0.5}));
}

TEST(OpLinspace, DefaultsAndLargeArrays) {
  NDArray d = linspace(0, 1, 3);
  EXPECT_EQ(d.dtype(), DType::kFloat32);
  EXPECT_EQ(d.device(), cpu(0));
  EXPECT_EQ(to_vector<float>(d), (std::vector<float>{0, 0.5, 1}));  // endpoint by default

  // Large enough to be split among intra-op threads; every value is NumPy's i * step + start.
  const int64_t n = 200001;
  const std::vector<double> v = to_vector<double>(linspace(-4, 6, n, true, DType::kFloat64));
  ASSERT_EQ(static_cast<int64_t>(v.size()), n);
  const double step = 10.0 / static_cast<double>(n - 1);
  for (int64_t i = 0; i + 1 < n; ++i) {
    ASSERT_EQ(v[static_cast<size_t>(i)], static_cast<double>(i) * step + -4.0) << "element " << i;
  }
  EXPECT_EQ(v.back(), 6.0);
}

TEST(OpLinspace, Errors) {
  EXPECT_THAT(error_of<ValueError>([] { linspace(0, 1, -1); }),
              HasSubstr("linspace: num is -1, expected num >= 0"));
  EXPECT_THAT(error_of<ValueError>([] { linspace(0, 1, -7, false); }),
              HasSubstr("linspace: num is -7, expected num >= 0"));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(error_of<ValueError>([&] { linspace(0, inf, 3); }),
              HasSubstr("linspace: start 0 and stop inf must be finite"));
  EXPECT_THAT(error_of<ValueError>([] { linspace(std::nan(""), 1, 3); }),
              HasSubstr("linspace: start nan and stop 1 must be finite"));
  const int n = num_cpu_devices();
  EXPECT_THAT(error_of<DeviceError>([&] { linspace(0, 1, 3, true, DType::kFloat32, cpu(n)); }),
              HasSubstr(fmt::format("linspace: device cpu({}) does not exist", n)));
}

// ---- eye --------------------------------------------------------------------------------------

std::vector<double> eye_reference(int64_t n, int64_t m, int64_t k) {
  std::vector<double> v(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      if (j - i == k) v[static_cast<size_t>(i * m + j)] = 1.0;
    }
  }
  return v;
}

TEST(OpEye, KnownMatrices) {
  EXPECT_EQ(to_vector<float>(eye(3)), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  // np.eye(3, 4, 1)
  EXPECT_EQ(to_vector<float>(eye(3, 4, 1)), (std::vector<float>{0, 1, 0, 0,  //
                                                                0, 0, 1, 0,  //
                                                                0, 0, 0, 1}));
  // np.eye(4, 3, -2)
  EXPECT_EQ(to_vector<float>(eye(4, 3, -2)), (std::vector<float>{0, 0, 0,  //
                                                                 0, 0, 0,  //
                                                                 1, 0, 0,  //
                                                                 0, 1, 0}));
  // np.eye(2, 5, 3) and a non-square main diagonal
  EXPECT_EQ(to_vector<float>(eye(2, 5, 3)), (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(to_vector<float>(eye(3, 2)), (std::vector<float>{1, 0, 0, 1, 0, 0}));
  NDArray d = eye(2);
  EXPECT_EQ(d.shape(), (Shape{2, 2}));
  EXPECT_EQ(d.dtype(), DType::kFloat32);
  EXPECT_EQ(d.device(), cpu(0));
}

TEST(OpEye, EveryDiagonalOfSeveralShapes) {
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {4, 4}, {3, 5}, {5, 3}, {1, 6}, {6, 1}};
  for (auto [n, m] : shapes) {
    for (int64_t k = -n - 1; k <= m + 1; ++k) {
      SCOPED_TRACE(fmt::format("eye({}, {}, {})", n, m, k));
      NDArray a = eye(n, m, k, DType::kFloat64);
      EXPECT_EQ(a.shape(), (Shape{n, m}));
      EXPECT_EQ(to_vector<double>(a), eye_reference(n, m, k));
    }
  }
}

TEST(OpEye, DiagonalsOutsideTheArrayAndEmptyShapes) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t small = std::numeric_limits<int64_t>::min();
  for (int64_t k : {int64_t{3}, int64_t{-3}, big, small}) {
    SCOPED_TRACE(k);
    EXPECT_EQ(to_vector<float>(eye(3, 3, k)), std::vector<float>(9, 0.0f));
  }
  EXPECT_EQ(eye(0).shape(), (Shape{0, 0}));
  EXPECT_EQ(eye(3, 0).shape(), (Shape{3, 0}));
  EXPECT_EQ(eye(0, 4, -1).shape(), (Shape{0, 4}));
  EXPECT_TRUE(to_vector<float>(eye(3, 0, 0)).empty());
}

TEST(OpEye, DTypesAndLargeArrays) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(fmt::format("{}", dt));
    NDArray a = eye(4, 5, -1, dt);
    EXPECT_EQ(a.dtype(), dt);
    EXPECT_EQ(to_vector<double>(a), eye_reference(4, 5, -1));
  }
  // 300000 elements: the zero fill is split among intra-op threads.
  EXPECT_EQ(to_vector<double>(eye(600, 500, 7, DType::kFloat64)), eye_reference(600, 500, 7));
  EXPECT_EQ(to_vector<double>(eye(500, 600, -9, DType::kFloat64)), eye_reference(500, 600, -9));
}

TEST(OpEye, Errors) {
  EXPECT_THAT(error_of<ValueError>([] { eye(-1); }), HasSubstr("eye: n is -1, expected n >= 0"));
  EXPECT_THAT(error_of<ValueError>([] { eye(3, -2); }),
              HasSubstr("eye: m is -2, expected m >= 0 (or -1 for m = n)"));
  EXPECT_THAT(error_of<ValueError>([] { eye(int64_t{1} << 32, int64_t{1} << 32); }),
              HasSubstr("eye: n 4294967296 by m 4294967296 is more elements than int64 counts"));
  const int n = num_cpu_devices();
  EXPECT_THAT(error_of<DeviceError>([&] { eye(2, -1, 0, DType::kFloat32, cpu(n)); }),
              HasSubstr(fmt::format("eye: device cpu({}) does not exist", n)));
}

TEST(OpLinspaceEye, RegisteredAsNotDifferentiableCreationOps) {
  for (const char* name : {"linspace", "eye"}) {
    const ops::OpDef& op = ops::get_op(name);
    EXPECT_TRUE(op.inputs.empty()) << name;
    EXPECT_TRUE(op.not_differentiable) << name;
    EXPECT_FALSE(op.random) << name;
  }
}

}  // namespace
}  // namespace janus
