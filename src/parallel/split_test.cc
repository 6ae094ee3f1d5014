// split_and_load: slices, placement, uneven batches, and the errors.
#include "janus/parallel/split.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "janus/base/error.h"
#include "janus/data/data_loader.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::parallel {
namespace {

using ::testing::HasSubstr;

TEST(SplitAndLoad, OneSlicePerDeviceInOrder) {
  const ScopedCpuDevices devices(4);
  const NDArray x = arange(0, 24, 1, DType::kFloat32).reshape(Shape{8, 3});
  const std::vector<NDArray> xs = split_and_load(x, {cpu(1), cpu(0), cpu(3), cpu(2)});
  ASSERT_EQ(xs.size(), 4u);
  const Device expected[] = {cpu(1), cpu(0), cpu(3), cpu(2)};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(xs[i].device(), expected[i]);
    EXPECT_EQ(xs[i].shape(), (Shape{2, 3}));
    const float first = static_cast<float>(i * 6);
    EXPECT_EQ(to_vector<float>(xs[i]),
              (std::vector<float>{first, first + 1, first + 2, first + 3, first + 4, first + 5}));
  }
  EXPECT_EQ(xs[1].storage(), x.storage());  // already on cpu(0): a view, no copy
  EXPECT_NE(xs[0].storage(), x.storage());
}

TEST(SplitAndLoad, UnevenBatchWhenAllowed) {
  const ScopedCpuDevices devices(2);
  const NDArray x = arange(0, 5, 1, DType::kInt64);
  const std::vector<NDArray> xs = split_and_load(x, {cpu(0), cpu(1)}, /*even_split=*/false);
  EXPECT_EQ(to_vector<int64_t>(xs[0]), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(to_vector<int64_t>(xs[1]), (std::vector<int64_t>{3, 4}));
}

// The operations that ran, by name and lane.
class LaneCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device device, Lane lane, int64_t,
                    int64_t) override {
    const std::lock_guard lock(mu);
    ++counts[fmt::format("{} {} {}", name, device, lane == Lane::kCompute ? "compute" : "other")];
  }
  std::mutex mu;
  std::map<std::string, int> counts;
};

// A slice for a device that reads the batch's memory in place is copied there by one
// operation on that device's compute lane, not by its copy worker.
TEST(SplitAndLoad, ASliceForAPeerDeviceIsCopiedOnItsComputeLane) {
  const ScopedCpuDevices devices(2);
  const NDArray x = arange(0, 8, 1, DType::kFloat32).reshape(Shape{4, 2});
  wait_all();
  LaneCounter counter;
  set_op_listener(&counter);
  const std::vector<NDArray> xs = split_and_load(x, {cpu(0), cpu(1)});
  wait_all();
  set_op_listener(nullptr);
  EXPECT_EQ(counter.counts, (std::map<std::string, int>{{"concat_into cpu(1) compute", 1}}));
  EXPECT_EQ(to_vector<float>(xs[1]), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(xs[1].device(), cpu(1));
}

TEST(SplitAndLoad, ErrorsNameTheSizesAndDevices) {
  const ScopedCpuDevices devices(2);
  const NDArray x = zeros({5, 2});
  std::string msg = error_of<ValueError>([&] { split_and_load(x, {cpu(0), cpu(1)}); });
  EXPECT_THAT(msg, HasSubstr("a batch of 5 rows does not split evenly into 2 parts"));
  EXPECT_THAT(msg, HasSubstr("split_and_load: batch of shape [5, 2] across [cpu(0), cpu(1)]"));
  msg = error_of<ValueError>([&] { split_and_load(x, {}); });
  EXPECT_THAT(msg, HasSubstr("split_and_load: the list of devices is empty"));
  msg = error_of<ValueError>([&] { split_and_load(zeros({4}), {cpu(1), cpu(0), cpu(1)}); });
  EXPECT_THAT(msg, HasSubstr("device cpu(1) appears twice in [cpu(1), cpu(0), cpu(1)]"));
  msg = error_of<ValueError>([&] { split_and_load(full({}, 1.0), {cpu(0)}); });
  EXPECT_THAT(msg, HasSubstr("the batch is a scalar"));
  msg = error_of<DeviceError>([&] { split_and_load(x, {cpu(0), cpu(63)}, false); });
  EXPECT_THAT(msg, HasSubstr("cpu(63) does not exist"));
}

// A DataLoader with devices gathers on each device the rows that split_and_load would give it
// from the whole batch: the same parts, in the same places (the training loop takes either).
TEST(SplitAndLoad, TheDataLoadersPartsAreTheSlicesOfTheBatch) {
  const ScopedCpuDevices scoped(3);
  const std::vector<Device> devices{cpu(1), cpu(2), cpu(0)};
  auto dataset = std::make_shared<data::ArrayDataset>(std::vector<NDArray>{
      arange(0, 52, 1, DType::kFloat32).reshape(Shape{13, 4}), arange(0, 13, 1, DType::kInt32)});
  const data::DataLoaderOptions whole{.batch_size = 8, .shuffle = true, .seed = 5};
  data::DataLoaderOptions split = whole;
  split.devices = devices;
  data::DataLoader whole_loader(dataset, whole), split_loader(dataset, split);
  int batches = 0;
  while (auto a = whole_loader.next()) {
    const std::optional<data::Batch> b = split_loader.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(a->indices, b->indices);
    for (size_t field = 0; field < 2; ++field) {
      const std::vector<NDArray> slices = split_and_load((*a)[field], devices, false);
      ASSERT_EQ(slices.size(), b->parts.size());
      for (size_t k = 0; k < slices.size(); ++k) {
        const NDArray& part = b->parts[k][field];
        EXPECT_EQ(part.device(), slices[k].device());
        EXPECT_EQ(part.shape(), slices[k].shape());
        EXPECT_EQ(to_vector<double>(cast(part, DType::kFloat64)),
                  to_vector<double>(cast(slices[k], DType::kFloat64)));
      }
    }
    ++batches;
  }
  EXPECT_EQ(batches, 2);
  EXPECT_FALSE(split_loader.next().has_value());
}

}  // namespace
}  // namespace janus::parallel
