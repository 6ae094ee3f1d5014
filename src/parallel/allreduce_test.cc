// ring_allreduce, reduce_into and broadcast_into across logical CPU devices: exact sums of
// integers at every size around the chunk boundaries, floats against a one-device sum, and the
// errors; concat_into, the all-gather's operator.
#include "janus/parallel/allreduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "testing/test_util.h"

namespace janus::parallel {
namespace {

using ::testing::HasSubstr;

// Array k on cpu(k): element i is (k + 1) * 1000 + i, so the sum is known exactly.
std::vector<NDArray> ramps(int n, int64_t size, DType dtype) {
  std::vector<NDArray> out;
  for (int k = 0; k < n; ++k) {
    NDArray a =
        arange(0, static_cast<double>(size), 1, dtype) + static_cast<double>((k + 1) * 1000);
    out.push_back(copyto(a, cpu(k)));
  }
  return out;
}

class RingAllreduce : public ::testing::TestWithParam<int> {};

TEST_P(RingAllreduce, EveryArrayHoldsTheExactSum) {
  const int n = GetParam();
  const ScopedCpuDevices devices(n);
  // Sizes below and above the ring threshold, and ones that n does not divide.
  for (int64_t size : {int64_t{1}, int64_t{7}, kRingMinElements * n - 1, kRingMinElements * n,
                       kRingMinElements * n + 3, int64_t{100003}}) {
    SCOPED_TRACE(fmt::format("{} devices, {} elements", n, size));
    const std::vector<NDArray> arrays = ramps(n, size, DType::kInt64);
    ring_allreduce(arrays);
    const int64_t offset = 1000 * n * (n + 1) / 2;
    for (int k = 0; k < n; ++k) {
      EXPECT_EQ(arrays[static_cast<size_t>(k)].device(), cpu(k));
      const std::vector<int64_t> v = to_vector<int64_t>(arrays[static_cast<size_t>(k)]);
      for (int64_t i = 0; i < size; ++i) {
        ASSERT_EQ(v[static_cast<size_t>(i)], offset + n * i) << "device " << k << " element " << i;
      }
    }
  }
}

TEST_P(RingAllreduce, FloatsAgreeWithOneDeviceAndReplicasAreBitwiseEqual) {
  const int n = GetParam();
  const ScopedCpuDevices devices(n);
  seed(3);
  std::vector<NDArray> arrays;
  NDArray expected = zeros({300, 257});
  for (int k = 0; k < n; ++k) {
    NDArray a = random_normal(0, 1, {300, 257}, DType::kFloat32, cpu(k));
    expected = expected + copyto(a, cpu(0));
    arrays.push_back(a);
  }
  ring_allreduce(arrays);
  const std::vector<float> want = to_vector<float>(expected);
  const std::vector<float> first = to_vector<float>(arrays[0]);
  for (size_t i = 0; i < want.size(); ++i) {
    // n terms of magnitude ~1: float32 rounding of a reordered sum is within a few ulps.
    ASSERT_NEAR(first[i], want[i], 1e-5f * n) << "element " << i;
  }
  for (int k = 1; k < n; ++k) EXPECT_EQ(to_vector<float>(arrays[static_cast<size_t>(k)]), first);
}

// ring_reduce_into: the exact sum lands in a destination on any device (one of the values'
// devices, or one of none of them), the values untouched.
TEST_P(RingAllreduce, ReduceIntoAnyDeviceGivesTheExactSumAndLeavesTheValues) {
  const int n = GetParam();
  const ScopedCpuDevices devices(n + 1);
  for (int64_t size : {int64_t{7}, kRingMinElements * n + 3, int64_t{100003}}) {
    for (int home : {0, n}) {  // a device with a value, and the extra one with none
      SCOPED_TRACE(fmt::format("{} devices, {} elements, into cpu({})", n, size, home));
      const std::vector<NDArray> values = ramps(n, size, DType::kInt64);
      const NDArray dst = empty({size}, DType::kInt64, cpu(home));
      ring_reduce_into(dst, values);
      const int64_t offset = 1000 * n * (n + 1) / 2;
      const std::vector<int64_t> v = to_vector<int64_t>(dst);
      for (int64_t i = 0; i < size; ++i) {
        ASSERT_EQ(v[static_cast<size_t>(i)], offset + n * i) << "element " << i;
      }
      for (int k = 0; k < n; ++k) {
        const std::vector<int64_t> w = to_vector<int64_t>(values[static_cast<size_t>(k)]);
        ASSERT_EQ(w[static_cast<size_t>(size - 1)], (k + 1) * 1000 + size - 1) << "value " << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, RingAllreduce, ::testing::Values(1, 2, 3, 4));

TEST(ReduceInto, SumsInOrderOnTheDestinationsDevice) {
  const ScopedCpuDevices devices(3);
  const NDArray a = full({4}, 1.0, DType::kFloat64, cpu(0));
  const NDArray b = full({4}, 2.0, DType::kFloat64, cpu(1));
  const NDArray c = full({4}, 4.0, DType::kFloat64, cpu(2));
  const NDArray dst = empty({4}, DType::kFloat64, cpu(2));
  const NDArray values[] = {a, b, c, b};
  reduce_into(dst, values);
  EXPECT_EQ(to_vector<double>(dst), (std::vector<double>{9, 9, 9, 9}));
  const NDArray in_place[] = {a, b};
  reduce_into(a, in_place);
  EXPECT_EQ(to_vector<double>(a), (std::vector<double>{3, 3, 3, 3}));
}

TEST(BroadcastInto, CopiesToEveryDevice) {
  const ScopedCpuDevices devices(2);
  const NDArray src = arange(0, 6, 1, DType::kInt32);
  const NDArray outs[] = {zeros({6}, DType::kInt32, cpu(1)), src, zeros({6}, DType::kInt32)};
  broadcast_into(src, outs);
  for (const NDArray& o : outs) EXPECT_EQ(to_vector<int32_t>(o), to_vector<int32_t>(src));
}

// Counts the operations that ran, by name and lane.
class OperationCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device, Lane lane, int64_t,
                    int64_t) override {
    const std::lock_guard lock(mu);
    ++counts[std::string(name) + (lane == Lane::kCompute ? "/compute" : "/other")];
  }
  std::map<std::string, int> snapshot() {
    const std::lock_guard lock(mu);
    return counts;
  }
  std::mutex mu;
  std::map<std::string, int> counts;
};

// Partial sums of more than 4 MB are written with streaming stores (peer_add): exact sums of
// integers held in floats, with a length that leaves a tail and chunks that start unaligned.
TEST(RingAllreduce, LargeFloatArraysHoldTheExactSum) {
  const ScopedCpuDevices devices(2);
  const int64_t size = (int64_t{1} << 21) + 3;  // 4 MB chunks and more, per device
  const std::vector<NDArray> arrays = ramps(2, size, DType::kFloat32);
  ring_allreduce(arrays);
  for (const NDArray& a : arrays) {
    const std::vector<float> got = to_vector<float>(a);
    int64_t wrong = 0;
    for (int64_t i = 0; i < size; ++i) {
      wrong += got[static_cast<size_t>(i)] != static_cast<float>(2 * i + 3000);
    }
    EXPECT_EQ(wrong, 0) << fmt::format("on {}", a.device());
  }
}

// On devices that share the host's memory, a device's all-gather is one operation on its
// compute lane that reads every partial sum in place: no copy per chunk, no hand-off to a copy
// worker and back (each a wake-up that waits for a core when every core belongs to a device's
// compute worker).
TEST(RingAllreduce, TheAllGatherIsOneOperationPerDeviceOnItsComputeLane) {
  for (int n : {2, 4}) {
    const ScopedCpuDevices devices(n);
    const std::vector<NDArray> arrays = ramps(n, kRingMinElements * n + 5, DType::kFloat32);
    wait_all();
    OperationCounter counter;
    set_op_listener(&counter);
    ring_allreduce(arrays);
    wait_all();
    set_op_listener(nullptr);
    const std::map<std::string, int> expected = {{"concat_into/compute", n},
                                                 {"peer_add/compute", n * (n - 1)}};
    EXPECT_EQ(counter.snapshot(), expected) << n << " devices";
  }
}

TEST(ConcatInto, WritesThePartsInOrderFromEveryDevice) {
  const ScopedCpuDevices devices(3);
  const NDArray dst = zeros({2, 3}, DType::kInt32, cpu(2));
  const NDArray big = arange(10, 16, 1, DType::kInt32);
  const NDArray parts[] = {copyto(from_vector<int32_t>({1, 2}, {2}), cpu(1)),
                           zeros({0}, DType::kInt32), big.slice(2, 5), full({1}, 7, DType::kInt32)};
  concat_into(dst, parts);
  EXPECT_EQ(to_vector<int32_t>(dst), (std::vector<int32_t>{1, 2, 12, 13, 14, 7}));
  concat_into(dst.slice(1, 2), std::span<const NDArray>(parts).subspan(2, 1));  // into a view
  EXPECT_EQ(to_vector<int32_t>(dst), (std::vector<int32_t>{1, 2, 12, 12, 13, 14}));
}

TEST(ConcatInto, ErrorsNameThePartAndTheSizes) {
  const ScopedCpuDevices devices(2);
  const NDArray dst = zeros({4});
  const NDArray short_parts[] = {zeros({1}), zeros({2}, DType::kFloat32, cpu(1))};
  std::string msg = error_of<ShapeError>([&] { concat_into(dst, short_parts); });
  EXPECT_THAT(msg, HasSubstr("concat_into: the parts hold 3 elements together but dst (shape "
                             "[4]) holds 4, expected the same number"));
  const NDArray dtypes[] = {zeros({2}), zeros({2}, DType::kFloat64)};
  msg = error_of<TypeError>([&] { concat_into(dst, dtypes); });
  EXPECT_THAT(msg, HasSubstr("concat_into: part 1 is float64 but dst is float32"));
  const NDArray alias[] = {zeros({2}), dst.slice(0, 2)};
  msg = error_of<ValueError>([&] { concat_into(dst, alias); });
  EXPECT_THAT(msg, HasSubstr("concat_into: part 1 shares dst's memory"));
}

TEST(RingAllreduceErrors, NameTheArrays) {
  const ScopedCpuDevices devices(2);
  const NDArray a = zeros({4}), b = zeros({5}, DType::kFloat32, cpu(1));
  const NDArray shapes[] = {a, b};
  std::string msg = error_of<ShapeError>([&] { ring_allreduce(shapes); });
  EXPECT_THAT(msg, HasSubstr("ring_allreduce: array 1 has shape [5], but array 0 has shape [4]"));
  const NDArray same_device[] = {a, zeros({4})};
  msg = error_of<ValueError>([&] { ring_allreduce(same_device); });
  EXPECT_THAT(msg, HasSubstr("arrays 0 and 1 are both on cpu(0)"));
  const NDArray dtypes[] = {a, zeros({4}, DType::kFloat64, cpu(1))};
  msg = error_of<TypeError>([&] { ring_allreduce(dtypes); });
  EXPECT_THAT(msg, HasSubstr("array 1 is float64, but array 0 is float32"));
  msg = error_of<ValueError>([&] { ring_allreduce({}); });
  EXPECT_THAT(msg, HasSubstr("no arrays given"));
  const NDArray alias[] = {zeros({4}), a};
  msg = error_of<ValueError>([&] { reduce_into(a, alias); });
  EXPECT_THAT(msg, HasSubstr("reduce: value 1 shares the destination's memory"));
  const NDArray pair[] = {a, zeros({4}, DType::kFloat32, cpu(1))};
  msg = error_of<ValueError>([&] { ring_reduce_into(a, pair); });
  EXPECT_THAT(msg, HasSubstr("ring_reduce: value 0 shares the destination's memory"));
  msg = error_of<ShapeError>([&] { ring_reduce_into(zeros({5}), pair); });
  EXPECT_THAT(msg,
              HasSubstr("ring_reduce: the destination is [5] float32, the values [4] float32"));
}

}  // namespace
}  // namespace janus::parallel
