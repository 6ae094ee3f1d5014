// ArrayDataset (lengths, views, row gather), the default batch assembly and TransformDataset.
#include "janus/data/dataset.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "testing/test_util.h"

namespace janus::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// x[i] = {3i, 3i+1, 3i+2} (float32, computed by the engine, so pending at first), y[i] = i.
std::shared_ptr<ArrayDataset> make_rows(int64_t n) {
  NDArray x = arange(0, static_cast<double>(3 * n)).reshape({n, 3});
  NDArray y = arange(0, static_cast<double>(n), 1, DType::kInt32);
  return std::make_shared<ArrayDataset>(std::vector<NDArray>{x, y});
}

TEST(ArrayDataset, GetReturnsRowsOfEveryArray) {
  auto ds = make_rows(5);
  EXPECT_EQ(ds->size(), 5);
  Sample s = ds->get(3);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].shape(), Shape({3}));
  EXPECT_EQ(s[1].shape(), Shape({}));
  EXPECT_THAT(to_vector<float>(s[0]), ElementsAre(9, 10, 11));
  EXPECT_EQ(item<int32_t>(s[1]), 3);
}

TEST(ArrayDataset, GetBatchGathersRowsInIndexOrder) {
  auto ds = make_rows(6);
  std::vector<int64_t> indices{4, 0, 1, 2, 5, 5};
  Sample b = ds->get_batch(indices);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].shape(), Shape({6, 3}));
  EXPECT_EQ(b[0].dtype(), DType::kFloat32);
  EXPECT_EQ(b[1].shape(), Shape({6}));
  EXPECT_EQ(b[1].dtype(), DType::kInt32);
  EXPECT_THAT(to_vector<float>(b[0]),
              ElementsAre(12, 13, 14, 0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 15, 16, 17));
  EXPECT_THAT(to_vector<int32_t>(b[1]), ElementsAre(4, 0, 1, 2, 5, 5));
}

TEST(ArrayDataset, BatchesAreIndependentOfTheSource) {
  auto ds = make_rows(3);
  std::vector<int64_t> indices{1};
  Sample b = ds->get_batch(indices);
  NDArray doubled = b[0] * 2.0;
  EXPECT_THAT(to_vector<float>(doubled), ElementsAre(6, 8, 10));
  EXPECT_THAT(to_vector<float>(ds->get(1)[0]), ElementsAre(3, 4, 5));
}

TEST(ArrayDataset, GatherReadsTheWritesPushedBeforeIt) {
  NDArray x = zeros({4, 3});
  ArrayDataset ds({x});
  std::vector<int64_t> first{0};
  EXPECT_THAT(to_vector<float>(ds.get_batch(first)[0]), ElementsAre(0, 0, 0));
  add_into(x, ones({4, 3}));  // pending when the next batch is asked for
  std::vector<int64_t> indices{3, 1};
  EXPECT_THAT(to_vector<float>(ds.get_batch(indices)[0]), ElementsAre(1, 1, 1, 1, 1, 1));
}

TEST(ArrayDataset, ArraysOnTwoDevicesGiveABatchOnBoth) {
  const int saved = num_cpu_devices();
  set_num_cpu_devices(2);
  {
    NDArray x = arange(0, 12).reshape({4, 3});
    NDArray y = copyto(arange(0, 4, 1, DType::kInt32), cpu(1));
    NDArray z = arange(100, 104);
    ArrayDataset ds({x, y, z});
    std::vector<int64_t> indices{2, 0};
    Sample b = ds.get_batch(indices);
    EXPECT_EQ(b[0].device(), cpu(0));
    EXPECT_EQ(b[1].device(), cpu(1));
    EXPECT_EQ(b[2].device(), cpu(0));
    EXPECT_THAT(to_vector<float>(b[0]), ElementsAre(6, 7, 8, 0, 1, 2));
    EXPECT_THAT(to_vector<int32_t>(b[1]), ElementsAre(2, 0));
    EXPECT_THAT(to_vector<float>(b[2]), ElementsAre(102, 100));
  }
  set_num_cpu_devices(saved);
}

// The operations that ran, by name, device and lane.
class OpCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device device, Lane lane, int64_t,
                    int64_t) override {
    const std::lock_guard lock(mu);
    ++counts[fmt::format("{} {} {}", name, device, lane == Lane::kCompute ? "compute" : "copy")];
  }
  std::mutex mu;
  std::map<std::string, int> counts;
};

// A device that reads the dataset's memory in place gathers its rows itself: one operation on
// its compute lane for every array, no gather elsewhere and no copy.
TEST(ArrayDataset, GetBatchOnAPeerDeviceGathersThereInOneOperation) {
  const ScopedCpuDevices devices(2);
  ArrayDataset ds({arange(0, 12).reshape({4, 3}), arange(0, 4, 1, DType::kInt32)});
  wait_all();
  OpCounter counter;
  set_op_listener(&counter);
  std::vector<int64_t> indices{3, 1};
  const Sample b = ds.get_batch_on(indices, cpu(1));
  wait_all();
  set_op_listener(nullptr);
  EXPECT_EQ(counter.counts, (std::map<std::string, int>{{"gather_batch cpu(1) compute", 1}}));
  EXPECT_EQ(b[0].device(), cpu(1));
  EXPECT_EQ(b[1].device(), cpu(1));
  EXPECT_THAT(to_vector<float>(b[0]), ElementsAre(9, 10, 11, 3, 4, 5));
  EXPECT_THAT(to_vector<int32_t>(b[1]), ElementsAre(3, 1));
  std::vector<int64_t> out_of_range{0, 4};
  EXPECT_THAT(error_of<IndexError>([&] { ds.get_batch_on(out_of_range, cpu(1)); }),
              HasSubstr("index 4 is out of range for 4 samples"));
}

// The default (a dataset without a gather of its own) stacks with get_batch, then copies the
// arrays that are not on the device.
TEST(TransformDataset, GetBatchOnCopiesTheBatchToTheDevice) {
  const ScopedCpuDevices devices(2);
  auto base = std::make_shared<ArrayDataset>(std::vector<NDArray>{arange(0, 4)});
  TransformDataset ds(base, [](Sample s) { return Sample{mul(s[0], 2.0)}; });
  std::vector<int64_t> indices{2, 0, 3};
  const Sample b = ds.get_batch_on(indices, cpu(1));
  EXPECT_EQ(b[0].device(), cpu(1));
  EXPECT_THAT(to_vector<float>(b[0]), ElementsAre(4, 0, 6));
}

TEST(ArrayDataset, LargeBatchesGatherEveryRowOnTheKernelThreads) {
  // 1 MB batches: above the size that splits the rows among the kernel threads. Runs of
  // consecutive indices, repeats and jumps, in a shuffled order.
  constexpr int64_t kRows = 512, kCols = 1024;
  auto ds = std::make_shared<ArrayDataset>(
      std::vector<NDArray>{arange(0, static_cast<double>(kRows * kCols)).reshape({kRows, kCols})});
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < 256; ++i) indices.push_back((i * 37 + i / 8) % kRows);
  for (int64_t i = 100; i < 120; ++i) indices.push_back(i);
  indices.push_back(7);
  indices.push_back(7);
  const std::vector<float> got = to_vector<float>(ds->get_batch(indices)[0]);
  ASSERT_EQ(got.size(), indices.size() * kCols);
  for (size_t r = 0; r < indices.size(); ++r) {
    for (int64_t c = 0; c < kCols; c += 255) {
      ASSERT_EQ(got[r * kCols + c], static_cast<float>(indices[r] * kCols + c))
          << "row " << r << " (sample " << indices[r] << "), column " << c;
    }
  }
}

TEST(ArrayDataset, ErrorsNameTheProblem) {
  NDArray a = zeros({4, 2});
  NDArray b = zeros({3});
  EXPECT_THAT(error_of<ShapeError>([&] {
                ArrayDataset ds({a, b});
              }),
              HasSubstr("arrays have different lengths: array 0 has 4 samples (shape [4, 2]), "
                        "array 1 has 3 (shape [3])"));
  EXPECT_THAT(error_of<ValueError>([&] { ArrayDataset ds({}); }),
              HasSubstr("needs at least one array"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                ArrayDataset ds({a, zeros({})});
              }),
              HasSubstr("array 1 is a scalar"));
  EXPECT_THAT(error_of<ValueError>([&] {
                ArrayDataset ds({a, NDArray()});
              }),
              HasSubstr("array 1 is undefined"));

  ArrayDataset ds({a});
  EXPECT_THAT(error_of<IndexError>([&] { ds.get(4); }),
              HasSubstr("index 4 is out of range for 4 samples"));
  std::vector<int64_t> bad{0, -1};
  EXPECT_THAT(error_of<IndexError>([&] { ds.get_batch(bad); }),
              HasSubstr("index -1 is out of range for 4 samples"));
  EXPECT_THAT(error_of<ValueError>([&] { ds.get_batch({}); }), HasSubstr("at least one index"));
}

TEST(ArrayDataset, ZeroSamples) {
  ArrayDataset ds({zeros({0, 3})});
  EXPECT_EQ(ds.size(), 0);
}

TEST(TransformDataset, AppliesTheTransformAndStacksWithTheDefaultBatch) {
  auto base = make_rows(4);
  auto ds = std::make_shared<TransformDataset>(base, [](Sample s) {
    s[0] = s[0] + 100.0;
    return s;
  });
  EXPECT_EQ(ds->size(), 4);
  std::vector<int64_t> indices{3, 1};
  Sample b = ds->get_batch(indices);
  EXPECT_EQ(b[0].shape(), Shape({2, 3}));
  EXPECT_EQ(b[1].shape(), Shape({2}));
  EXPECT_THAT(to_vector<float>(b[0]), ElementsAre(109, 110, 111, 103, 104, 105));
  EXPECT_THAT(to_vector<int32_t>(b[1]), ElementsAre(3, 1));

  EXPECT_THAT(
      error_of<ValueError>([&] { TransformDataset t(nullptr, [](Sample s) { return s; }); }),
      HasSubstr("base dataset is null"));
  EXPECT_THAT(error_of<ValueError>([&] { TransformDataset t(base, nullptr); }),
              HasSubstr("transform is empty"));
}

TEST(TransformDataset, SamplesThatDoNotAgreeCannotBeStacked) {
  auto base = make_rows(4);
  TransformDataset ds(base, [](Sample s) {
    if (item<int32_t>(s[1]) == 2) s[0] = zeros({2});
    return s;
  });
  std::vector<int64_t> indices{1, 2};
  EXPECT_THAT(error_of<ShapeError>([&] { ds.get_batch(indices); }),
              HasSubstr("array 0 of sample 2 is float32 [2], the first sample of the batch has "
                        "float32 [3]"));
}

}  // namespace
}  // namespace janus::data
