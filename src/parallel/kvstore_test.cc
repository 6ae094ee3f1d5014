// The in-process KVStores (`local`, `device`): init, push (sums), pull (broadcast), pushpull,
// broadcast, updates on the store, int and string keys, list forms, and every error naming
// its key.
#include "janus/optim/kvstore.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::kvstore {
namespace {

using ::testing::HasSubstr;

class KVStoreTest : public ::testing::TestWithParam<const char*> {
 protected:
  ScopedCpuDevices devices_{4};
  KVStorePtr kv_ = create(GetParam());
};

std::vector<float> fill(size_t n, float v) { return std::vector<float>(n, v); }

TEST_P(KVStoreTest, PushSumsAndPullBroadcasts) {
  EXPECT_EQ(kv_->type(), GetParam());
  kv_->init(3, zeros({2, 3}));
  const std::vector<NDArray> values = {full({2, 3}, 1.0, DType::kFloat32, cpu(0)),
                                       full({2, 3}, 2.0, DType::kFloat32, cpu(1)),
                                       full({2, 3}, 4.0, DType::kFloat32, cpu(2))};
  kv_->push(3, values);
  const std::vector<NDArray> outs = {zeros({2, 3}, DType::kFloat32, cpu(3)), zeros({2, 3})};
  kv_->pull(3, outs);
  for (const NDArray& o : outs) EXPECT_EQ(to_vector<float>(o), fill(6, 7.0f));
  // The pushed values are left alone.
  EXPECT_EQ(to_vector<float>(values[1]), fill(6, 2.0f));
  // Without an optimizer, a push replaces the stored value.
  kv_->push(3, full({2, 3}, -1.0));
  kv_->pull(3, outs[0]);
  EXPECT_EQ(to_vector<float>(outs[0]), fill(6, -1.0f));
}

TEST_P(KVStoreTest, LargeValuesAcrossFourDevices) {
  // Above the ring's threshold: the `device` store reduces with the ring.
  const int64_t n = 50000;
  kv_->init("w", zeros({n}, DType::kInt64));
  std::vector<NDArray> values;
  for (int k = 0; k < 4; ++k) values.push_back(arange(0, n, 1, DType::kInt64, cpu(k)) * (k + 1.0));
  kv_->pushpull("w", values, values);
  for (const NDArray& v : values) {
    const std::vector<int64_t> got = to_vector<int64_t>(v);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], 10 * i);
  }
  // Without an optimizer pushpull is an allreduce: the stored value stays as it was.
  NDArray out = ones({n}, DType::kInt64, cpu(2));
  kv_->pull("w", out);
  EXPECT_EQ(to_vector<int64_t>(out), std::vector<int64_t>(n, 0));
}

TEST_P(KVStoreTest, PushPullIntoOtherOutputs) {
  kv_->init(0, zeros({5}));
  const std::vector<NDArray> values = {full({5}, 1.5, DType::kFloat32, cpu(1)),
                                       full({5}, 2.5, DType::kFloat32, cpu(2))};
  const std::vector<NDArray> outs = {zeros({5}, DType::kFloat32, cpu(3))};
  kv_->pushpull(0, values, outs);
  EXPECT_EQ(to_vector<float>(outs[0]), fill(5, 4.0f));
  EXPECT_EQ(to_vector<float>(values[0]), fill(5, 1.5f));
}

TEST_P(KVStoreTest, BroadcastInitialisesAndCopies) {
  const NDArray w = arange(0, 4, 1, DType::kFloat64);
  const std::vector<NDArray> outs = {zeros({4}, DType::kFloat64, cpu(1)),
                                     zeros({4}, DType::kFloat64, cpu(2))};
  kv_->broadcast(7, w, outs);
  for (const NDArray& o : outs) EXPECT_EQ(to_vector<double>(o), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_THAT(error_of<ValueError>([&] { kv_->broadcast(7, w, outs); }),
              HasSubstr("key 7 is already initialised"));
}

TEST_P(KVStoreTest, OptimizerUpdatesOnTheStore) {
  kv_->set_optimizer(optim::make_optimizer("sgd", 0.5));
  ASSERT_NE(kv_->optimizer(), nullptr);
  kv_->init(1, full({3}, 10.0));
  kv_->push(1, std::vector<NDArray>{full({3}, 1.0, DType::kFloat32, cpu(0)),
                                    full({3}, 3.0, DType::kFloat32, cpu(1))});
  NDArray w = zeros({3}, DType::kFloat32, cpu(3));
  kv_->pull(1, w);
  EXPECT_EQ(to_vector<float>(w), fill(3, 8.0f));  // 10 - 0.5 * (1 + 3)
  kv_->pushpull(1, std::vector<NDArray>{full({3}, 2.0)}, std::vector<NDArray>{w});
  EXPECT_EQ(to_vector<float>(w), fill(3, 7.0f));
  kv_->set_optimizer(nullptr);
  EXPECT_EQ(kv_->optimizer(), nullptr);
}

TEST_P(KVStoreTest, ListForms) {
  const std::vector<Key> keys = {"a", "b"};
  kv_->init(keys, std::vector<NDArray>{zeros({2}), zeros({3})});
  const std::vector<std::vector<NDArray>> values = {
      {ones({2}), ones({2}, DType::kFloat32, cpu(1))},
      {full({3}, 5.0), full({3}, 5.0, DType::kFloat32, cpu(1))}};
  kv_->push(keys, values);
  const std::vector<std::vector<NDArray>> outs = {{zeros({2}, DType::kFloat32, cpu(2))},
                                                  {zeros({3}, DType::kFloat32, cpu(3))}};
  kv_->pull(keys, outs);
  EXPECT_EQ(to_vector<float>(outs[0][0]), fill(2, 2.0f));
  EXPECT_EQ(to_vector<float>(outs[1][0]), fill(3, 10.0f));
  kv_->pushpull(keys, values, outs, /*priority=*/3);
  EXPECT_EQ(to_vector<float>(outs[1][0]), fill(3, 10.0f));
  EXPECT_THAT(error_of<ValueError>([&] {
                kv_->pull(keys, {outs.begin(), 1});
              }),
              HasSubstr("kvstore: pull: 2 keys but 1 lists of outputs"));
}

TEST_P(KVStoreTest, ErrorsNameTheKey) {
  kv_->init(2, zeros({2, 2}));
  std::string msg = error_of<ValueError>([&] { kv_->pull(9, zeros({2, 2})); });
  EXPECT_THAT(
      msg, HasSubstr(fmt::format("kvstore '{}': pull: key 9 was never initialised", GetParam())));
  msg = error_of<ValueError>([&] { kv_->push(9, zeros({2, 2})); });
  EXPECT_THAT(msg, HasSubstr("push: key 9 was never initialised"));
  msg = error_of<ValueError>([&] { kv_->init(2, zeros({2, 2})); });
  EXPECT_THAT(msg, HasSubstr("init: key 2 is already initialised"));
  msg = error_of<ShapeError>([&] { kv_->push(2, zeros({4})); });
  EXPECT_THAT(msg, HasSubstr("push: key 2: value 0 has shape [4], but the key holds shape [2, 2]"));
  msg = error_of<TypeError>([&] { kv_->pull(2, zeros({2, 2}, DType::kFloat64)); });
  EXPECT_THAT(msg, HasSubstr("pull: key 2: output 0 is float64, but the key holds float32"));
  msg = error_of<ValueError>([&] { kv_->init("w", zeros({1})); });
  EXPECT_THAT(msg, HasSubstr("init: key 'w' is a string, but this store's keys are integers"));
  msg = error_of<ValueError>([&] { kv_->push(2, std::vector<NDArray>{}); });
  EXPECT_THAT(msg, HasSubstr("push: key 2: no values given"));
}

TEST_P(KVStoreTest, SameDeviceValuesAreSummedToo) {
  kv_->init(0, zeros({3}));
  kv_->push(0, std::vector<NDArray>{ones({3}), ones({3}), ones({3}, DType::kFloat32, cpu(1))});
  NDArray out = zeros({3});
  kv_->pull(0, out);
  EXPECT_EQ(to_vector<float>(out), fill(3, 3.0f));
}

INSTANTIATE_TEST_SUITE_P(Kinds, KVStoreTest, ::testing::Values("local", "device"));

TEST(KVStoreCreate, UnknownKindListsTheKnownOnes) {
  const std::string msg = error_of<ValueError>([] { create("nccl"); });
  EXPECT_THAT(msg, HasSubstr("unknown kvstore type 'nccl', expected one of: "));
  EXPECT_THAT(msg, HasSubstr("device"));
  EXPECT_THAT(msg, HasSubstr("local"));
}

}  // namespace
}  // namespace janus::kvstore
