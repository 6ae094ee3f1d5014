// Tests of the operators that write into an existing array, the steps of collectives:
// copy_into (across logical devices, on the copy lane), add_into and fill_into (in place, per
// dtype), and the engine priority that ScopedPriority gives the operators invoked in its scope.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

class OpInto : public ::testing::Test {
 protected:
  ScopedCpuDevices devices_{2};
};

TEST_F(OpInto, CopyIntoWritesTheDestinationAcrossDevices) {
  NDArray dst = zeros({2, 3}, DType::kFloat32, cpu(1));
  NDArray src = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  copy_into(dst, src);
  EXPECT_EQ(to_vector<float>(dst), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(dst.device(), cpu(1));
}

TEST_F(OpInto, CopyIntoAViewLeavesTheRestAlone) {
  NDArray dst = zeros({4}, DType::kInt64, cpu(1));
  copy_into(dst.slice(1, 3), from_vector<int64_t>({7, 8}, {2}));
  EXPECT_EQ(to_vector<int64_t>(dst), (std::vector<int64_t>{0, 7, 8, 0}));
}

TEST_F(OpInto, AddIntoSumsInPlaceForEveryDType) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                   DType::kInt32, DType::kInt64, DType::kUInt8}) {
    SCOPED_TRACE(fmt::format("{}", dt));
    NDArray dst = from_vector<double>({1, 2, 3, 4}, {4}, dt);
    add_into(dst, from_vector<double>({10, 20, 30, 40}, {4}, dt));
    EXPECT_EQ(to_vector<double>(dst), (std::vector<double>{11, 22, 33, 44}));
  }
  NDArray flags = from_vector<double>({0, 1, 0}, {3}, DType::kBool);
  add_into(flags, from_vector<double>({0, 0, 1}, {3}, DType::kBool));
  EXPECT_EQ(to_vector<double>(flags), (std::vector<double>{0, 1, 1}));
}

TEST_F(OpInto, AddIntoWrapsSignedIntegersAsNumPyDoes) {
  NDArray dst = from_vector<int32_t>({std::numeric_limits<int32_t>::max()}, {1});
  add_into(dst, from_vector<int32_t>({1}, {1}));
  EXPECT_EQ(to_vector<int32_t>(dst)[0], std::numeric_limits<int32_t>::min());
}

TEST_F(OpInto, AddIntoALargeArrayUsesEveryElement) {
  NDArray dst = ones({1 << 18}, DType::kFloat32, cpu(1));
  add_into(dst, full({1 << 18}, 2.0, DType::kFloat32, cpu(1)));
  for (float v : to_vector<float>(dst)) ASSERT_EQ(v, 3.0f);
}

TEST_F(OpInto, FillIntoSetsEveryElementInPlaceForEveryDType) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                   DType::kInt32, DType::kInt64, DType::kUInt8}) {
    SCOPED_TRACE(fmt::format("{}", dt));
    NDArray dst = from_vector<double>({1, 2, 3, 4}, {4}, dt);
    const NDArray same = dst;
    fill_into(dst, 5);
    EXPECT_EQ(to_vector<double>(same), (std::vector<double>{5, 5, 5, 5}));
  }
  NDArray big = ones({1 << 18}, DType::kFloat32, cpu(1));
  fill_into(big.slice(1, (1 << 18) - 1), 0);
  const std::vector<float> v = to_vector<float>(big);
  EXPECT_EQ(v.front(), 1.0f);
  EXPECT_EQ(v.back(), 1.0f);
  for (size_t i = 1; i + 1 < v.size(); ++i) ASSERT_EQ(v[i], 0.0f) << i;
}

TEST_F(OpInto, MismatchesAreErrorsNamingBothSides) {
  NDArray dst = zeros({2, 3});
  std::string msg = error_of<ShapeError>([&] { copy_into(dst, zeros({3, 2})); });
  EXPECT_THAT(msg, HasSubstr("copy_into: dst has shape [2, 3] but src has shape [3, 2]"));
  msg = error_of<TypeError>([&] { add_into(dst, zeros({2, 3}, DType::kFloat64)); });
  EXPECT_THAT(msg, HasSubstr("add_into: dst is float32 but src is float64"));
  msg = error_of<DeviceError>([&] { add_into(dst, zeros({2, 3}, DType::kFloat32, cpu(1))); });
  EXPECT_THAT(msg, HasSubstr("add_into"));
}

// Records the add_into operations in the order they ran.
class AddIntoOrder : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail& detail, Device, Lane, int64_t,
                    int64_t) override {
    if (name != "add_into") return;
    std::lock_guard lock(mu_);
    shapes_.push_back(detail.shapes);
  }
  std::vector<std::string> shapes() {
    std::lock_guard lock(mu_);
    return shapes_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> shapes_;
};

// Two operations that become ready together (both read what one gate operation writes) run in
// the order of the priorities that ScopedPriority gave them, not in push order. The gate holds
// cpu(1)'s compute worker until both are pushed, however slowly this thread pushes (ASan).
TEST_F(OpInto, ReadyOperationsRunByPriority) {
  AddIntoOrder order;
  set_op_listener(&order);
  const NDArray low = zeros({256, 512}, DType::kFloat32, cpu(1));
  const NDArray high = zeros({128, 512}, DType::kFloat32, cpu(1));
  const NDArray big = full({512, 512}, 512.0, DType::kFloat32, cpu(1));
  std::atomic<bool> go{false};
  engine().push(
      [&go](const RunContext&) {
        while (!go.load()) std::this_thread::yield();
      },
      {}, {big.var()}, cpu(1), Lane::kCompute, 0, "gate");
  {
    const ops::ScopedPriority p(1);
    add_into(low, big.slice(0, 256));
  }
  {
    const ops::ScopedPriority p(5);
    add_into(high, big.slice(0, 128));
  }
  go = true;
  wait_all();
  set_op_listener(nullptr);
  const std::vector<std::string> shapes = order.shapes();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_THAT(shapes[0], HasSubstr("[128, 512]")) << "the higher priority ran second";
  EXPECT_THAT(shapes[1], HasSubstr("[256, 512]"));
  EXPECT_EQ(to_vector<float>(high)[0], 512.0f);
}

TEST_F(OpInto, ScopedPriorityNestsAndRestores) {
  // The scope is observable only through the engine's order; here: it nests and values stay
  // right whatever the priorities.
  NDArray dst = zeros({8});
  {
    ops::ScopedPriority high(5);
    add_into(dst, ones({8}));
    {
      ops::ScopedPriority low(-3);
      add_into(dst, ones({8}));
    }
    add_into(dst, ones({8}));
  }
  for (float v : to_vector<float>(dst)) EXPECT_EQ(v, 3.0f);
}

}  // namespace
}  // namespace janus
