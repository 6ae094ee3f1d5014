// The engine-backed array functions: host transfers, blockers, printing, deferred release.
#include "janus/engine/array.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <sstream>
#include <thread>

#include "janus/engine/external.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using testing::HasSubstr;

TEST(Array, FromVectorRoundTripsWithConversion) {
  NDArray a = from_vector<double>({1.5, -2, 3, 4}, {2, 2}, DType::kFloat32);
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(to_vector<float>(a), (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_EQ(to_vector<int64_t>(a), (std::vector<int64_t>{1, -2, 3, 4}));
  EXPECT_FLOAT_EQ(item<float>(a.at(1).at(0)), 3.0f);
}

TEST(Array, FromVectorChecksTheCount) {
  try {
    from_vector<float>({1, 2, 3}, {2, 2});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("got 3 values for shape [2, 2], expected 4"));
  }
}

TEST(Array, ItemNeedsOneElement) {
  try {
    item<float>(empty({2, 3}));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("exactly one element, got shape [2, 3]"));
  }
}

TEST(Array, PrintsLikeNumPy) {
  std::ostringstream os;
  os << from_vector<float>({3, 3}, {1, 2});
  EXPECT_EQ(os.str(), "array([[3., 3.]], dtype=float32)");
  std::ostringstream ints;
  ints << from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(ints.str(), "array([[1, 2, 3],\n       [4, 5, 6]], dtype=int32)");
  std::ostringstream scalar;
  scalar << from_vector<float>({0.5f}, {});
  EXPECT_EQ(scalar.str(), "array(0.5, dtype=float32)");
}

TEST(Array, LongAxesAreSummarised) {
  std::vector<float> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  std::ostringstream os;
  os << from_vector<float>(v, {100});
  EXPECT_EQ(os.str(), "array([0., 1., 2., ..., 97., 98., 99.], dtype=float32)");
}

TEST(Array, StorageIsReleasedOnlyAfterItsLastPendingUse) {
  wait_all();
  const int64_t before = memory_stats(cpu()).bytes_in_use;
  std::atomic<bool> release{false};
  {
    NDArray a = empty({1024, 256});  // 1 MiB
    float* p = a.data<float>();
    engine().push(
        [&release, p](const RunContext&) {
          while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          p[0] = 1.0f;  // still ours: the release waits for this kernel
        },
        {}, {a.var()}, cpu());
  }  // last handle dropped while the kernel is pending
  EXPECT_GE(memory_stats(cpu()).bytes_in_use, before + 1024 * 256 * 4);
  release = true;
  wait_all();
  EXPECT_EQ(memory_stats(cpu()).bytes_in_use, before);
}

TEST(Array, BackPressureBoundsMemory) {
  set_engine(EngineKind::kThreaded, EngineOptions{.max_in_flight = 4});
  allocator_for(cpu()).reset_peak();
  const int64_t base = memory_stats(cpu()).bytes_in_use;
  constexpr int64_t kBytes = 1 << 20;
  for (int i = 0; i < 64; ++i) {
    NDArray a = empty({kBytes / 4});
    float* p = a.data<float>();
    engine().push(
        [p](const RunContext&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          p[0] = 2.0f;
        },
        {}, {a.var()}, cpu());
  }
  wait_all();
  // Without back-pressure all 64 MiB would be held at once; with it, about 4-5 MiB.
  EXPECT_LE(memory_stats(cpu()).peak_bytes_in_use - base, 8 * kBytes);
  set_engine(EngineKind::kThreaded, engine_options_from_env());
}

TEST(Array, WaitToReadRethrowsWithTheOperatorName) {
  NDArray a = empty({2});
  engine().push([](const RunContext&) { throw ValueError("kaput"); }, {}, {a.var()}, cpu(),
                Lane::kCompute, 0, "broken_kernel");
  try {
    wait_to_read(a);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("operator 'broken_kernel' failed: kaput"));
  }
  EXPECT_THROW(to_vector<float>(a), ValueError);  // no silently wrong numbers
  EXPECT_NO_THROW(wait_all());                    // already reported once
}

// Memory of a device that set_num_cpu_devices later removed still returns to its pool (the
// release runs in a shared_ptr deleter, where throwing would terminate the process).
TEST(Array, ArraysOutlivingTheirDeviceCountAreStillReleased) {
  set_num_cpu_devices(2);
  {
    NDArray a = empty({256}, DType::kFloat32, cpu(1));
    set_num_cpu_devices(1);
  }
  wait_all();
  SUCCEED();
}

TEST(Array, EmptyOnAMissingDeviceNamesIt) {
  try {
    empty({2}, DType::kFloat32, cpu(num_cpu_devices()));
    ADD_FAILURE() << "empty accepted a device that does not exist";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr(fmt::format("empty: device cpu({}) does not exist", num_cpu_devices())));
  }
}

TEST(Array, EmptyRefusesShapesTooLargeToCount) {
  try {
    empty({int64_t{1} << 62, 4});  // 2^64 elements: wrapped to 0 before the check
    ADD_FAILURE() << "empty accepted 2^64 elements";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("shape [4611686018427387904, 4]: the element count overflows"));
  }
  try {
    empty({int64_t{1} << 61, 2}, DType::kFloat64);  // 2^62 elements, but 2^65 bytes
    ADD_FAILURE() << "empty accepted 2^65 bytes";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty: shape [2305843009213693952, 2] of float64 needs more "
                                    "than 9223372036854775807 bytes"));
  }
}

}  // namespace
}  // namespace janus

namespace janus {
namespace {

// from_external: the owner's memory is used in place, and released once, only after the last
// handle is gone and the operations pushed on it have run (a pending write is held back by a
// gate that the test opens after dropping every handle).
TEST(Array, ExternalMemoryIsReleasedAfterTheLastHandleAndPendingWork) {
  std::vector<float> owned = {1, 2, 3, 4, 5, 6};
  std::atomic<int> released{0};
  std::atomic<bool> written_before_release{false};
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  {
    NDArray a = from_external(owned.data(), {2, 3}, DType::kFloat32, cpu(), [&] {
      written_before_release = owned[0] == 42.0f;
      ++released;
    });
    EXPECT_EQ(a.raw_data(), owned.data());
    EXPECT_EQ(to_vector<float>(a.reshape({6})), owned);  // read in place
    NDArray view = a.slice(1, 2);
    engine().push(
        [open, &owned](const RunContext&) {
          open.wait();
          owned[0] = 42.0f;  // a write the engine ordered on the array
        },
        {}, {a.var()}, cpu());
    a = NDArray();
    EXPECT_EQ(released, 0);  // the view still holds the storage
    view = NDArray();
  }
  EXPECT_EQ(released, 0);  // the write is pending
  gate.set_value();
  wait_all();
  EXPECT_EQ(released, 1);
  EXPECT_TRUE(written_before_release);
}

TEST(Array, ExternalMemoryIsChecked) {
  alignas(8) char bytes[16] = {};
  EXPECT_THAT(
      error_of<ValueError>([&] { from_external(bytes + 1, {2}, DType::kFloat32, cpu(), [] {}); }),
      HasSubstr("is not aligned to the 4-byte elements of float32"));
  EXPECT_THAT(
      error_of<ValueError>([] { from_external(nullptr, {2}, DType::kFloat32, cpu(), [] {}); }),
      HasSubstr("from_external: null data for shape [2] of float32"));
}

}  // namespace
}  // namespace janus
