// DataLoader: batch shapes and contents, the last-batch policies (rollover across epochs),
// seeded shuffling, workers against the caller's thread, errors and early destruction.
#include "janus/data/data_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// x[i] = {3i, 3i+1, 3i+2} float32, y[i] = i int32.
std::shared_ptr<ArrayDataset> make_rows(int64_t n) {
  NDArray x = arange(0, static_cast<double>(3 * n)).reshape({n, 3});
  NDArray y = arange(0, static_cast<double>(n), 1, DType::kInt32);
  return std::make_shared<ArrayDataset>(std::vector<NDArray>{x, y});
}

using Indices = std::vector<std::vector<int64_t>>;

/// The sample indices of every batch of one epoch (a range-for, so a new epoch).
Indices run_epoch(DataLoader& loader) {
  Indices out;
  for (const Batch& b : loader) out.push_back(b.indices);
  return out;
}

std::vector<int64_t> flatten_indices(const Indices& batches) {
  std::vector<int64_t> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

/// Checks that every array of `b` holds the rows that its indices name.
void expect_rows_match(const Batch& b) {
  std::vector<float> x = to_vector<float>(b[0]);
  std::vector<int32_t> y = to_vector<int32_t>(b[1]);
  ASSERT_EQ(y.size(), b.indices.size());
  for (size_t i = 0; i < b.indices.size(); ++i) {
    EXPECT_EQ(y[i], b.indices[i]);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(x[i * 3 + k], static_cast<float>(3 * b.indices[i]) + static_cast<float>(k));
    }
  }
}

TEST(DataLoader, BatchesStackSamplesAlongANewFirstAxis) {
  DataLoader loader(make_rows(10), {.batch_size = 4});
  EXPECT_EQ(loader.num_batches(), 3);
  std::vector<int64_t> sizes;
  int64_t index = 0;
  for (const Batch& b : loader) {
    EXPECT_EQ(b.index, index++);
    EXPECT_EQ(b.epoch, 0);
    ASSERT_EQ(b.arrays.size(), 2u);
    EXPECT_EQ(b[0].shape(), Shape({b.batch_size(), 3}));
    EXPECT_EQ(b[1].shape(), Shape({b.batch_size()}));
    expect_rows_match(b);
    sizes.push_back(b.batch_size());
  }
  EXPECT_THAT(sizes, ElementsAre(4, 4, 2));
  EXPECT_EQ(loader.epochs_started(), 1);
}

TEST(DataLoader, NextGoesThroughAnEpochThenStartsTheNext) {
  DataLoader loader(make_rows(5), {.batch_size = 2});
  std::vector<int64_t> seen;
  while (auto b = loader.next()) seen.push_back(b->batch_size());
  EXPECT_THAT(seen, ElementsAre(2, 2, 1));
  EXPECT_EQ(loader.epochs_started(), 1);
  auto b = loader.next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->epoch, 1);
  EXPECT_THAT(b->indices, ElementsAre(0, 1));
}

TEST(DataLoader, KeepAndDiscard) {
  DataLoader keep(make_rows(10), {.batch_size = 4, .last_batch = LastBatch::kKeep});
  EXPECT_EQ(run_epoch(keep), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  DataLoader discard(make_rows(10), {.batch_size = 4, .last_batch = LastBatch::kDiscard});
  EXPECT_EQ(discard.num_batches(), 2);
  EXPECT_EQ(run_epoch(discard), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(run_epoch(discard), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  DataLoader exact(make_rows(8), {.batch_size = 4, .last_batch = LastBatch::kKeep});
  EXPECT_EQ(run_epoch(exact).size(), 2u);
}

TEST(DataLoader, RolloverStartsTheNextEpochWithTheLeftoverSamples) {
  DataLoader loader(make_rows(10), {.batch_size = 4, .last_batch = LastBatch::kRollover});
  EXPECT_EQ(loader.num_batches(), 2);
  EXPECT_EQ(run_epoch(loader), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  // 8 and 9 were carried over: 12 samples now, three full batches and nothing left.
  EXPECT_EQ(loader.num_batches(), 3);
  EXPECT_EQ(run_epoch(loader), (Indices{{8, 9, 0, 1}, {2, 3, 4, 5}, {6, 7, 8, 9}}));
  EXPECT_EQ(loader.num_batches(), 2);
  EXPECT_EQ(run_epoch(loader), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(DataLoader, RolloverWithABatchLargerThanTheDataset) {
  DataLoader loader(make_rows(3), {.batch_size = 5, .last_batch = LastBatch::kRollover});
  EXPECT_TRUE(run_epoch(loader).empty());
  EXPECT_EQ(run_epoch(loader), (Indices{{0, 1, 2, 0, 1}}));
  EXPECT_TRUE(run_epoch(loader).empty());  // 2 carried + 3 new: 4 samples carried again
  EXPECT_EQ(run_epoch(loader), (Indices{{2, 0, 1, 2, 0}}));
}

TEST(DataLoader, RolloverIsCarriedOnlyFromAnEpochThatEnded) {
  DataLoader loader(make_rows(10), {.batch_size = 4, .last_batch = LastBatch::kRollover});
  ASSERT_TRUE(loader.next().has_value());  // epoch 0, abandoned after one batch
  EXPECT_EQ(run_epoch(loader), (Indices{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(DataLoader, RolloverWithShuffleVisitsEverySampleOnce) {
  DataLoader loader(
      make_rows(10),
      {.batch_size = 3, .shuffle = true, .seed = 7, .last_batch = LastBatch::kRollover});
  std::vector<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 5; ++epoch) orders.push_back(flatten_indices(run_epoch(loader)));
  // Epoch e shows the c samples carried from epoch e-1, then a prefix of its own permutation
  // of 0..9; the rest of that permutation (which does not fill a batch) opens epoch e+1.
  size_t carried = 0;
  for (size_t e = 0; e + 1 < orders.size(); ++e) {
    SCOPED_TRACE(fmt::format("epoch {}", e));
    const size_t next_carried = (carried + 10) % 3;
    EXPECT_EQ(orders[e].size(), carried + 10 - next_carried);
    std::vector<int64_t> permutation(orders[e].begin() + static_cast<std::ptrdiff_t>(carried),
                                     orders[e].end());
    permutation.insert(permutation.end(), orders[e + 1].begin(),
                       orders[e + 1].begin() + static_cast<std::ptrdiff_t>(next_carried));
    std::sort(permutation.begin(), permutation.end());
    std::vector<int64_t> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(permutation, expected);
    carried = next_carried;
  }
}

TEST(DataLoader, ShuffleIsDeterministicBySeedAndChangesEveryEpoch) {
  auto ds = make_rows(50);
  DataLoaderOptions options{.batch_size = 8, .shuffle = true, .seed = 42};
  DataLoader a(ds, options);
  DataLoader b(ds, options);
  Indices a0 = run_epoch(a), a1 = run_epoch(a);
  Indices b0 = run_epoch(b), b1 = run_epoch(b);
  EXPECT_EQ(a0, b0);
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a0, a1);

  std::vector<int64_t> order = flatten_indices(a0);
  std::vector<int64_t> identity(50);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(order, identity);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, identity);

  options.seed = 43;
  DataLoader c(ds, options);
  EXPECT_NE(run_epoch(c), a0);
}

// A run resumed after two epochs sees the third epoch's order, as the uninterrupted run does.
TEST(DataLoader, FirstEpochGivesTheOrderOfThatEpoch) {
  auto ds = make_rows(30);
  DataLoader whole(ds, {.batch_size = 7, .shuffle = true, .seed = 5});
  run_epoch(whole);
  run_epoch(whole);
  const Indices third = run_epoch(whole);
  DataLoader resumed(ds, {.batch_size = 7, .shuffle = true, .seed = 5, .first_epoch = 2});
  auto first = resumed.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->epoch, 2);
  Indices again{first->indices};
  while (auto b = resumed.next()) again.push_back(b->indices);
  EXPECT_EQ(again, third);
  EXPECT_THROW(DataLoader(ds, {.first_epoch = -1}), ValueError);
}

TEST(DataLoader, ShuffledBatchesHoldTheRowsTheyName) {
  DataLoader loader(make_rows(20), {.batch_size = 6, .shuffle = true, .seed = 3});
  for (const Batch& b : loader) expect_rows_match(b);
}

TEST(DataLoader, WorkersGiveTheSameBatchesAsTheCallersThread) {
  auto ds = make_rows(37);
  DataLoaderOptions options{.batch_size = 5, .shuffle = true, .seed = 11};
  DataLoader serial(ds, options);
  std::vector<std::vector<float>> expected_x;
  Indices expected = run_epoch(serial);
  for (const Batch& b : serial) expected_x.push_back(to_vector<float>(b[0]));  // epoch 1

  for (int workers : {1, 2, 4, 8}) {
    SCOPED_TRACE(fmt::format("num_workers={}", workers));
    options.num_workers = workers;
    DataLoader loader(ds, options);
    EXPECT_EQ(run_epoch(loader), expected);
    size_t k = 0;
    for (const Batch& b : loader) {
      ASSERT_LT(k, expected_x.size());
      EXPECT_EQ(to_vector<float>(b[0]), expected_x[k++]);
      expect_rows_match(b);
    }
    EXPECT_EQ(k, expected_x.size());
  }
}

/// Sample i = {[i] float32, i int32}; get() throws for `bad_index`, optionally sleeps, and
/// counts get_batch calls.
class ProbeDataset : public Dataset {
 public:
  ProbeDataset(int64_t n, int64_t bad_index = -1, bool janus_error = true,
               std::chrono::microseconds delay = {})
      : n_(n), bad_index_(bad_index), janus_error_(janus_error), delay_(delay) {}

  int64_t size() const override { return n_; }
  Sample get(int64_t index) const override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (index == bad_index_) {
      if (janus_error_) JANUS_THROW(ValueError, "probe: sample {} is broken", index);
      throw std::runtime_error("probe: not a janus error");
    }
    return {from_vector<float>({static_cast<float>(index)}, {1}),
            from_vector<int32_t>({static_cast<int32_t>(index)}, {})};
  }
  Sample get_batch(std::span<const int64_t> indices) const override {
    batches_loaded.fetch_add(1, std::memory_order_relaxed);
    return Dataset::get_batch(indices);
  }

  mutable std::atomic<int64_t> batches_loaded{0};

 private:
  int64_t n_;
  int64_t bad_index_;
  bool janus_error_;
  std::chrono::microseconds delay_;
};

TEST(DataLoader, GenericDatasetsBatchThroughTheEngine) {
  for (int workers : {0, 2}) {
    DataLoader loader(std::make_shared<ProbeDataset>(7),
                      {.batch_size = 3, .shuffle = true, .seed = 5, .num_workers = workers});
    for (const Batch& b : loader) {
      EXPECT_EQ(b[0].shape(), Shape({b.batch_size(), 1}));
      std::vector<float> x = to_vector<float>(b[0]);
      std::vector<int32_t> y = to_vector<int32_t>(b[1]);
      for (size_t i = 0; i < b.indices.size(); ++i) {
        EXPECT_EQ(x[i], static_cast<float>(b.indices[i]));
        EXPECT_EQ(y[i], b.indices[i]);
      }
    }
  }
}

TEST(DataLoader, AWorkerErrorIsRethrownAtTheBatchThatFailed) {
  for (int workers : {0, 1, 2, 4}) {
    SCOPED_TRACE(fmt::format("num_workers={}", workers));
    DataLoader loader(std::make_shared<ProbeDataset>(12, /*bad_index=*/7),
                      {.batch_size = 2, .num_workers = workers});
    for (int k = 0; k < 3; ++k) {
      auto b = loader.next();
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ(b->index, k);
    }
    EXPECT_EQ(error_of<ValueError>([&] { loader.next(); }),
              "data loader: epoch 0, batch 3: probe: sample 7 is broken");
    // The failed batch is skipped; the epoch goes on.
    auto b = loader.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->index, 4);
    EXPECT_THAT(b->indices, ElementsAre(8, 9));
  }
}

TEST(DataLoader, OtherExceptionsKeepTheirType) {
  DataLoader loader(std::make_shared<ProbeDataset>(4, /*bad_index=*/0, /*janus_error=*/false),
                    {.batch_size = 2, .num_workers = 2});
  EXPECT_EQ(error_of<std::runtime_error>([&] {
              for (const Batch& b : loader) (void)b;
            }),
            "probe: not a janus error");
}

TEST(DataLoader, WorkersLoadAheadByAtMostPrefetchBatches) {
  auto ds = std::make_shared<ProbeDataset>(100);
  DataLoader loader(ds, {.batch_size = 1, .num_workers = 2, .prefetch = 3});
  ASSERT_TRUE(loader.next().has_value());
  // With one batch consumed, the workers may load batches 1, 2 and 3, and no more.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ds->batches_loaded.load() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ds->batches_loaded.load(), 4);
  ASSERT_TRUE(loader.next().has_value());
  while (ds->batches_loaded.load() < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ds->batches_loaded.load(), 5);
}

TEST(DataLoader, DestroyingMidEpochStopsAndJoinsTheWorkers) {
  // Workers blocked on a full queue, and workers busy in a slow dataset.
  for (auto delay : {std::chrono::microseconds(0), std::chrono::microseconds(2000)}) {
    auto ds = std::make_shared<ProbeDataset>(1000, -1, true, delay);
    const auto start = std::chrono::steady_clock::now();
    {
      DataLoader loader(ds, {.batch_size = 4, .num_workers = 4});
      ASSERT_TRUE(loader.next().has_value());
    }
    // Each worker finishes at most the batch it is loading: far less than the whole epoch.
    EXPECT_LE(ds->batches_loaded.load(), 1 + 2 * 4);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  }
  // Destroyed before any batch was asked for, and after an epoch was started but not read.
  { DataLoader idle(make_rows(10), {.batch_size = 2, .num_workers = 3}); }
  {
    DataLoader started(make_rows(100), {.batch_size = 2, .num_workers = 3});
    auto it = started.begin();
    (void)it;
  }
}

TEST(DataLoader, ANewEpochMidEpochStartsOver) {
  DataLoader loader(make_rows(10), {.batch_size = 2, .num_workers = 2});
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(loader.next().has_value());
  Indices e1 = run_epoch(loader);
  EXPECT_EQ(e1.size(), 5u);
  EXPECT_EQ(e1.front(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(loader.epochs_started(), 2);
}

TEST(DataLoader, MoveKeepsTheEpochGoing) {
  DataLoader a(make_rows(6), {.batch_size = 2, .num_workers = 2});
  ASSERT_TRUE(a.next().has_value());
  DataLoader b = std::move(a);
  auto batch = b.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->index, 1);
}

TEST(DataLoader, EmptyDataset) {
  DataLoader loader(make_rows(0), {.batch_size = 3, .num_workers = 2});
  EXPECT_EQ(loader.num_batches(), 0);
  EXPECT_TRUE(run_epoch(loader).empty());
  EXPECT_FALSE(loader.next().has_value());
}

TEST(DataLoader, BadOptions) {
  auto ds = make_rows(4);
  EXPECT_THAT(error_of<ValueError>([&] { DataLoader l(ds, {.batch_size = 0}); }),
              HasSubstr("batch_size is 0, expected >= 1"));
  EXPECT_THAT(error_of<ValueError>([&] { DataLoader l(ds, {.num_workers = -1}); }),
              HasSubstr("num_workers is -1, expected >= 0"));
  EXPECT_THAT(error_of<ValueError>([&] { DataLoader l(ds, {.prefetch = -2}); }),
              HasSubstr("prefetch is -2"));
  EXPECT_THAT(error_of<ValueError>([&] { DataLoader l(nullptr); }), HasSubstr("dataset is null"));
}

// With devices, a batch comes as one part per device, split as split_and_load splits it with
// even_split=false, each part on its device; with and without workers, the parts hold the rows
// that the batch's indices name. A last batch of fewer rows than devices gives a part per row.
TEST(DataLoader, PartsPerDeviceHoldTheirShareOfTheRows) {
  const ScopedCpuDevices scoped(3);
  for (int workers : {0, 2}) {
    DataLoader loader(make_rows(11), {.batch_size = 5,
                                      .shuffle = true,
                                      .seed = 3,
                                      .num_workers = workers,
                                      .devices = {cpu(2), cpu(0), cpu(1)}});
    std::vector<std::vector<size_t>> sizes;
    std::vector<int64_t> seen;
    for (const Batch& b : loader) {
      EXPECT_TRUE(b.arrays.empty());
      std::vector<size_t> part_sizes;
      size_t row = 0;
      for (size_t k = 0; k < b.parts.size(); ++k) {
        const Sample& part = b.parts[k];
        const Device device = std::vector<Device>{cpu(2), cpu(0), cpu(1)}[k];
        ASSERT_EQ(part.size(), 2u);
        EXPECT_EQ(part[0].device(), device);
        EXPECT_EQ(part[1].device(), device);
        const std::vector<float> x = to_vector<float>(part[0]);
        const std::vector<int32_t> y = to_vector<int32_t>(part[1]);
        part_sizes.push_back(y.size());
        for (size_t i = 0; i < y.size(); ++i, ++row) {
          EXPECT_EQ(y[i], b.indices[row]);
          EXPECT_EQ(x[i * 3 + 1], static_cast<float>(3 * b.indices[row] + 1));
        }
      }
      EXPECT_EQ(row, b.indices.size());
      sizes.push_back(part_sizes);
      seen.insert(seen.end(), b.indices.begin(), b.indices.end());
    }
    EXPECT_EQ(sizes, (std::vector<std::vector<size_t>>{{2, 2, 1}, {2, 2, 1}, {1}}))
        << workers << " workers";
    std::sort(seen.begin(), seen.end());
    std::vector<int64_t> all(11);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(seen, all);
  }
}

TEST(DataLoader, DevicesListedTwiceAreRefused) {
  const ScopedCpuDevices scoped(2);
  EXPECT_THAT(
      error_of<ValueError>([] {
        DataLoader loader(make_rows(4), {.batch_size = 2, .devices = {cpu(0), cpu(1), cpu(0)}});
      }),
      HasSubstr("DataLoader: devices lists cpu(0) twice (at 0 and 2), expected distinct "
                "devices"));
}

}  // namespace
}  // namespace janus::data
