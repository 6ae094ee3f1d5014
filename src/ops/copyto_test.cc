// Tests of copyto between logical CPU devices: values, placement, views, ordering with the
// compute that produces and consumes the copy, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

// Two logical CPU devices for each test; the count is restored after every array is released.
class OpCopyto : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = num_cpu_devices();
    set_num_cpu_devices(std::max(saved_, 2));
  }
  void TearDown() override {
    wait_all();  // the test's arrays are gone: release cpu(1) memory while cpu(1) exists
    set_num_cpu_devices(saved_);
  }
  int saved_ = 1;
};

std::vector<double> random_values(size_t n, DType dtype, std::mt19937& rng) {
  std::vector<double> v(n);
  for (double& x : v) {
    x = dtype == DType::kBool    ? std::uniform_int_distribution<int>(0, 1)(rng)
        : dtype == DType::kUInt8 ? std::uniform_int_distribution<int>(0, 255)(rng)
                                 : std::uniform_int_distribution<int>(-5000, 5000)(rng) / 8.0;
  }
  return v;
}

TEST_F(OpCopyto, CopiesEveryDTypeToAnotherDevice) {
  std::mt19937 rng(31);
  for (DType dt : kAllDTypes) {
    for (const Shape& s : {Shape{}, Shape{0}, Shape{5}, Shape{3, 7}, Shape{2, 0, 4}}) {
      SCOPED_TRACE(fmt::format("{} {}", s, dt));
      NDArray a = from_vector(random_values(static_cast<size_t>(s.numel()), dt, rng), s, dt);
      NDArray b = copyto(a, cpu(1));
      EXPECT_EQ(b.device(), cpu(1));
      EXPECT_EQ(b.shape(), s);
      EXPECT_EQ(b.dtype(), dt);
      EXPECT_NE(b.storage(), a.storage());
      EXPECT_NE(b.var(), a.var());
      EXPECT_EQ(to_vector<double>(b), to_vector<double>(a));
      EXPECT_EQ(a.device(), cpu(0));  // the source stays where it was
    }
  }
}

TEST_F(OpCopyto, RoundTripAndSameDeviceCopy) {
  NDArray a = arange(0, 1000, 1, DType::kInt64);
  NDArray there = copyto(a, cpu(1));
  NDArray back = copyto(there, cpu(0));
  EXPECT_EQ(back.device(), cpu(0));
  EXPECT_EQ(to_vector<int64_t>(back), to_vector<int64_t>(a));
  NDArray same = copyto(a, cpu(0));  // a copy, not an alias
  EXPECT_EQ(same.device(), cpu(0));
  EXPECT_NE(same.raw_data(), a.raw_data());
  EXPECT_EQ(to_vector<int64_t>(same), to_vector<int64_t>(a));
}

TEST_F(OpCopyto, LargeArrayOrderedWithComputeOnBothDevices) {
  seed(5);
  NDArray a = random_uniform(-1.0, 1.0, {1 << 20});  // written on cpu(0)
  NDArray b = copyto(a, cpu(1));                     // copy lane of cpu(1): after a
  NDArray c = mul(add(b, 1.0), 2.0);                 // compute on cpu(1): after b
  NDArray d = copyto(c, cpu(0));                     // back: after c
  EXPECT_EQ(c.device(), cpu(1));
  EXPECT_EQ(d.device(), cpu(0));
  const std::vector<float> va = to_vector<float>(a);
  const std::vector<float> vd = to_vector<float>(d);
  ASSERT_EQ(va.size(), vd.size());
  for (size_t i = 0; i < va.size(); ++i) {
    ASSERT_EQ(vd[i], (va[i] + 1.0f) * 2.0f) << "element " << i;
  }
  EXPECT_EQ(to_vector<float>(b), va);
}

TEST_F(OpCopyto, CopiesOnlyTheView) {
  NDArray base = from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  NDArray rows = copyto(base.slice(1, 3), cpu(1));
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(rows.offset_bytes(), 0u);
  EXPECT_EQ(to_vector<float>(rows), (std::vector<float>{3, 4, 5, 6, 7, 8}));
  NDArray one = copyto(base.at(-1).at(1), cpu(1));
  EXPECT_EQ(one.shape(), Shape{});
  EXPECT_EQ(item<float>(one), 10.0f);
}

TEST_F(OpCopyto, SameValuesUnderTheNaiveEngine) {
  const EngineKind saved = engine().kind();
  {
    set_engine(EngineKind::kNaive, engine_options_from_env());
    NDArray a = arange(0, 100, 0.5, DType::kFloat64);
    NDArray b = copyto(a, cpu(1));
    EXPECT_EQ(b.device(), cpu(1));
    EXPECT_EQ(to_vector<double>(b), to_vector<double>(a));
  }
  set_engine(saved, engine_options_from_env());
}

TEST_F(OpCopyto, UnknownDestinationsAreRejected) {
  const int n = num_cpu_devices();
  NDArray a = ones({3});
  std::string msg = error_of<DeviceError>([&] { copyto(a, cpu(n)); });
  EXPECT_THAT(msg, HasSubstr(fmt::format("copyto: device cpu({}) does not exist", n)));
  EXPECT_THAT(msg, HasSubstr(fmt::format("there are {} cpu devices", n)));
  msg = error_of<DeviceError>([&] { copyto(a, gpu(0)); });
  EXPECT_THAT(msg, HasSubstr("copyto: device gpu(0) is not available"));
  msg = error_of<ValueError>([] { copyto(NDArray(), cpu(1)); });
  EXPECT_THAT(msg, HasSubstr("copyto: input 'a' is an undefined array"));
}

TEST_F(OpCopyto, OperandsOnDifferentDevicesNeedACopy) {
  NDArray a = ones({2, 2});
  NDArray b = ones({2, 2}, DType::kFloat32, cpu(1));
  std::string msg = error_of<DeviceError>([&] { dot(a, b); });
  EXPECT_THAT(msg, HasSubstr("dot: input 'b' is on cpu(1) but input 'a' is on cpu(0)"));
  msg = error_of<DeviceError>([&] { add(a, b); });
  EXPECT_THAT(msg, HasSubstr("add: input 'b' is on cpu(1) but input 'a' is on cpu(0)"));
  // After copying, the same call works.
  EXPECT_EQ(to_vector<float>(dot(copyto(a, cpu(1)), b)), (std::vector<float>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace janus
