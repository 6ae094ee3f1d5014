// Data-parallel training on logical CPU devices: replicas per device, a block called on a slice
// uses that slice's replicas, the Trainer sums gradients through a KVStore, and training on 2
// and 4 devices gives the parameters of training on one device with the whole batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/nn/loss.h"
#include "janus/ops/ops.h"
#include "janus/optim/trainer.h"
#include "janus/parallel/split.h"

#include "testing/test_util.h"

namespace janus::parallel {
namespace {

using ::testing::HasSubstr;

std::vector<Device> first_devices(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(cpu(i));
  return out;
}

std::shared_ptr<nn::Sequential> make_net() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Dense>(16, "relu"), std::make_shared<nn::Dense>(4));
  return net;
}

// One step that minimises the sum of net's outputs on a random batch of 4 split across cpu(0)
// and cpu(1).
void sum_step(nn::Block& net, optim::Trainer& trainer) {
  const std::vector<NDArray> xs = split_and_load(random_normal(0, 1, {4, 6}), {cpu(0), cpu(1)});
  std::vector<NDArray> outs;
  {
    autograd::RecordScope record;
    for (const NDArray& x : xs) outs.push_back(sum(net(x)));
  }
  autograd::backward(outs);
  trainer.step(4);
}

struct TrainSetup {
  std::string kvstore = "device";
  bool update_on_kvstore = false;
  bool hybridize = false;
  std::string optimizer = "sgd";
  size_t bucket_bytes = optim::Trainer::kDefaultBucketBytes;
};

// Trains make_net() for `steps` steps of batch 8 on `devices` devices (each step: one slice per
// device, forward and backward per slice, one Trainer step); returns the parameters.
std::vector<std::vector<NDArray>> train(int devices, int steps, const TrainSetup& setup) {
  seed(11);
  const NDArray x = random_normal(0, 1, {8 * steps, 6});
  const NDArray y = cast(cast(random_uniform(0, 4, {8 * steps}), DType::kInt64), DType::kFloat32);
  auto net = make_net();
  const std::vector<Device> devs = first_devices(devices);
  seed(12);
  net->initialize(nn::Xavier(), devs);
  if (setup.hybridize) net->hybridize();
  optim::Trainer trainer(net->collect_params(),
                         optim::make_optimizer(setup.optimizer, 0.1, {.momentum = 0.9}),
                         kvstore::create(setup.kvstore), setup.update_on_kvstore);
  trainer.set_bucket_bytes(setup.bucket_bytes);
  nn::SoftmaxCrossEntropyLoss loss_fn;
  for (int s = 0; s < steps; ++s) {
    const std::vector<NDArray> xs = split_and_load(x.slice(8 * s, 8 * s + 8), devs);
    const std::vector<NDArray> ys = split_and_load(y.slice(8 * s, 8 * s + 8), devs);
    std::vector<NDArray> losses;
    {
      autograd::RecordScope record;
      for (size_t d = 0; d < devs.size(); ++d) losses.push_back(loss_fn((*net)(xs[d]), ys[d]));
    }
    autograd::backward(losses);
    trainer.step(8);
  }
  std::vector<std::vector<NDArray>> out;
  for (const auto& [name, p] : net->collect_params()) out.push_back(p->list_data());
  return out;
}

// Float32 sums of 8 per-sample gradients taken in another grouping (per device, then across
// devices) differ by a few ulps of the gradient; 10 steps of SGD with momentum carry that to a
// few 1e-7 relative. 1e-5 leaves two orders of magnitude of margin, and is far below the
// change of one step (lr 0.1 times gradients of order 0.1).
constexpr float kTolerance = 1e-5f;

void expect_close(const std::vector<std::vector<NDArray>>& got,
                  const std::vector<std::vector<NDArray>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t p = 0; p < got.size(); ++p) {
    const std::vector<float> w = to_vector<float>(want[p][0]);
    for (size_t r = 0; r < got[p].size(); ++r) {
      const std::vector<float> g = to_vector<float>(got[p][r]);
      ASSERT_EQ(g.size(), w.size());
      for (size_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g[i], w[i], kTolerance * std::max(1.0f, std::abs(w[i])))
            << "parameter " << p << " replica " << r << " element " << i;
      }
    }
  }
}

void expect_replicas_identical(const std::vector<std::vector<NDArray>>& params) {
  for (size_t p = 0; p < params.size(); ++p) {
    const std::vector<float> first = to_vector<float>(params[p][0]);
    for (size_t r = 1; r < params[p].size(); ++r) {
      EXPECT_EQ(to_vector<float>(params[p][r]), first) << "parameter " << p << " replica " << r;
      EXPECT_EQ(params[p][r].device(), cpu(static_cast<int>(r)));
    }
  }
}

class DataParallel : public ::testing::TestWithParam<std::tuple<const char*, bool>> {
 protected:
  ScopedCpuDevices devices_{4};
  TrainSetup setup() const { return {std::get<0>(GetParam()), std::get<1>(GetParam())}; }
};

TEST_P(DataParallel, TwoAndFourDevicesMatchOneDeviceWithTheWholeBatch) {
  const auto one = train(1, 10, setup());
  for (int n : {2, 4}) {
    SCOPED_TRACE(fmt::format("{} devices", n));
    const auto many = train(n, 10, setup());
    expect_close(many, one);
    expect_replicas_identical(many);
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, DataParallel,
                         ::testing::Combine(::testing::Values("local", "device"),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return fmt::format(
                               "{}_{}", std::get<0>(info.param),
                               std::get<1>(info.param) ? "update_on_kvstore" : "update_on_devices");
                         });

TEST(DataParallelTraining, ReplicasStayBitwiseIdenticalOverManySteps) {
  const ScopedCpuDevices devices(2);
  expect_replicas_identical(train(2, 60, {.optimizer = "adam"}));
}

TEST(DataParallelTraining, OneBucketPerParameterEqualsOneBucketForAll) {
  const ScopedCpuDevices devices(4);
  const auto fused = train(4, 10, {});
  const auto separate = train(4, 10, {.bucket_bytes = 0});
  expect_close(separate, fused);
  expect_replicas_identical(separate);
}

TEST(DataParallelTraining, BucketsFollowBackwardOrderAndTheSizeCap) {
  const ScopedCpuDevices devices(2);
  auto net = make_net();  // 0.weight [16, 6], 0.bias [16], 1.weight [4, 16], 1.bias [4]
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  auto layout = [&](size_t bytes) {
    optim::Trainer trainer(net->collect_params(), optim::make_optimizer("sgd", 0.1));
    trainer.set_bucket_bytes(bytes);
    sum_step(*net, trainer);
    EXPECT_THROW(trainer.set_bucket_bytes(1), ValueError);
    return trainer.bucket_layout();
  };
  using L = std::vector<std::vector<size_t>>;
  EXPECT_EQ(layout(1 << 20), (L{{3, 2, 1, 0}}));
  EXPECT_EQ(layout(0), (L{{3}, {2}, {1}, {0}}));
  // 1.bias 16 B + 1.weight 256 B reach 200 bytes; then 0.bias 64 B + 0.weight 384 B.
  EXPECT_EQ(layout(200), (L{{3, 2}, {1, 0}}));
}

// Records what ran: name, lane and times.
// Counts the store's sums of gradients (add_into: the ring's reduce-scatter) that have
// finished. Copies are not counted: packing a gradient into its bucket is a copy too, and it
// needs only that gradient.
class ReductionCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device, Lane, int64_t,
                    int64_t) override {
    if (name == "add_into") ++finished;
  }
  std::atomic<int> finished{0};
};

// The reductions run while backward still computes. A gate on each device's comm lane writes
// the input slice after forward has read it, so backward's product for the first layer's
// weight (the last gradient that backward produces, and the only one that reads the input)
// waits for the gate. The other layers' gradients are free: their reductions must finish while
// the gate still holds. Were every reduction to wait for the whole backward pass, none would
// finish and the wait below would give up (after a minute: a liveness bound, not a timing
// threshold; a correct run passes it as soon as the first reduction ends).
TEST(DataParallelTraining, ReductionsInterleaveWithBackward) {
  const ScopedCpuDevices devices(2);
  auto net = std::make_shared<nn::Sequential>();
  for (int i = 0; i < 4; ++i) net->add(std::make_shared<nn::Dense>(384, "relu"));
  net->add(std::make_shared<nn::Dense>(10));
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  optim::Trainer trainer(net->collect_params(), optim::make_optimizer("sgd", 0.01),
                         kvstore::create("device"));
  trainer.set_bucket_bytes(0);
  nn::SoftmaxCrossEntropyLoss loss_fn;
  const NDArray x = random_normal(0, 1, {256, 384});
  const NDArray y = cast(cast(random_uniform(0, 10, {256}), DType::kInt64), DType::kFloat32);
  for (int step = 0; step < 2; ++step) {  // the first step fixes the shapes and the buckets
    const std::vector<NDArray> xs = split_and_load(x, {cpu(0), cpu(1)});
    const std::vector<NDArray> ys = split_and_load(y, {cpu(0), cpu(1)});
    wait_all();
    const bool gated = step == 1;
    std::atomic<bool> go{false};
    ReductionCounter counter;
    if (gated) set_op_listener(&counter);
    std::vector<NDArray> losses;
    {
      autograd::RecordScope record;
      for (size_t d = 0; d < 2; ++d) losses.push_back(loss_fn((*net)(xs[d]), ys[d]));
    }
    for (size_t d = 0; gated && d < 2; ++d) {
      engine().push(
          [&go](const RunContext&) {
            while (!go.load()) std::this_thread::yield();
          },
          {}, {xs[d].var()}, xs[d].device(), Lane::kComm, 0, "gate");
    }
    autograd::backward(losses);
    trainer.step(256);
    bool reduced_while_gated = !gated;
    for (int i = 0; gated && i < 60000 && !reduced_while_gated; ++i) {
      reduced_while_gated = counter.finished.load() > 0;
      if (!reduced_while_gated) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    go = true;
    wait_all();
    set_op_listener(nullptr);
    EXPECT_TRUE(reduced_while_gated) << "every reduction waited for the whole backward pass";
  }
}

// Counts the operations that ran, by name and lane.
class OperationCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device, Lane lane, int64_t,
                    int64_t) override {
    const std::lock_guard lock(mu);
    ++counts[std::string(name) + (lane == Lane::kCompute ? "/compute" : "/other")];
  }
  int count(const std::string& key) {
    const std::lock_guard lock(mu);
    return counts[key];
  }
  std::mutex mu;
  std::map<std::string, int> counts;
};

// A bucket of several gradients is packed by one operation per device, on the compute lane,
// whatever the number of gradients: not a copy per gradient on the copy lane (a LeNet step on
// 2 devices pushed 40 of them, each burst a hand-off to the copy worker and back). Then one
// operation per device sums the two devices' packed gradients into its gradients and updates
// every parameter of the bucket (a LeNet step pushed an update per parameter and device, 20,
// and the ring's two operations per device, each a wait for the other device).
TEST(DataParallelTraining, ABucketIsPackedAndUpdatedByOneOperationPerDevice) {
  const ScopedCpuDevices devices(2);
  auto net = std::make_shared<nn::Sequential>();
  for (int i = 0; i < 4; ++i) net->add(std::make_shared<nn::Dense>(8, "relu"));
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  optim::Trainer trainer(net->collect_params(),
                         optim::make_optimizer("sgd", 0.01, {.momentum = 0.9}),
                         kvstore::create("device"));
  sum_step(*net, trainer);  // fixes the shapes and the buckets
  ASSERT_EQ(trainer.bucket_layout().size(), 1U) << "the 8 parameters share one bucket";
  wait_all();
  OperationCounter counter;
  set_op_listener(&counter);
  sum_step(*net, trainer);
  wait_all();
  set_op_listener(nullptr);
  EXPECT_EQ(counter.count("bucket_gather/compute"), 2);
  EXPECT_EQ(counter.count("fused_update/compute"), 2);
  EXPECT_EQ(counter.count("bucket_gather/other") + counter.count("fused_update/other"), 0);
  EXPECT_EQ(counter.count("bucket_scatter/compute") + counter.count("sgd_mom_update/compute"), 0);
  EXPECT_EQ(counter.count("peer_add/compute") + counter.count("add_into/compute"), 0)
      << "the store summed: the sum was not fused into the update";
}

// step() leaves every replica's gradient holding the sum over the replicas, as
// allreduce_grads() does, though the copy back happens inside the fused update.
TEST(DataParallelTraining, AfterAStepEveryGradientHoldsTheSum) {
  const ScopedCpuDevices devices(2);
  auto net = make_net();
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  optim::Trainer trainer(net->collect_params(), optim::make_optimizer("sgd", 0.1),
                         kvstore::create("device"));
  const std::vector<NDArray> xs = split_and_load(random_normal(0, 1, {4, 6}), {cpu(0), cpu(1)});
  std::vector<NDArray> outs;
  {
    autograd::RecordScope record;
    for (const NDArray& x : xs) outs.push_back(sum((*net)(x)));
  }
  autograd::backward(outs);
  std::vector<std::vector<float>> want;
  for (const auto& [name, p] : trainer.params()) {
    const std::vector<float> g0 = to_vector<float>(p->grad(cpu(0)));
    const std::vector<float> g1 = to_vector<float>(p->grad(cpu(1)));
    std::vector<float> s(g0.size());
    for (size_t i = 0; i < s.size(); ++i) s[i] = g0[i] + g1[i];
    want.push_back(s);
  }
  trainer.step(4);
  for (size_t k = 0; k < want.size(); ++k) {
    const nn::Parameter& p = *trainer.params()[k].second;
    for (Device d : {cpu(0), cpu(1)}) {
      // One addition of two floats: the ring's sum is exactly the one computed here.
      EXPECT_EQ(to_vector<float>(p.grad(d)), want[k])
          << trainer.params()[k].first << " " << fmt::format("{}", d);
    }
  }
}

TEST(DataParallelTraining, HybridizedEqualsImperative) {
  const ScopedCpuDevices devices(2);
  const auto imperative = train(2, 10, {});
  const auto hybridized = train(2, 10, {.hybridize = true});
  expect_close(hybridized, imperative);
  expect_replicas_identical(hybridized);
}

TEST(DataParallelTraining, AHybridizedBlockCompilesOneGraphPerDevice) {
  const ScopedCpuDevices devices(2);
  auto net = make_net();
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  net->hybridize();
  const NDArray x = random_normal(0, 1, {4, 6});
  const NDArray y0 = (*net)(x);
  const NDArray y1 = (*net)(copyto(x, cpu(1)));
  EXPECT_EQ(net->trace_count(), 2);
  EXPECT_EQ(y1.device(), cpu(1));
  EXPECT_EQ(to_vector<float>(y0), to_vector<float>(y1));  // identical replicas, same graph
  (*net)(copyto(x, cpu(1)));
  EXPECT_EQ(net->trace_count(), 2);
}

TEST(Replicas, InitializeListsAndMissingReplicaError) {
  const ScopedCpuDevices devices(3);
  auto net = make_net();
  net->initialize(nn::Xavier(), {cpu(0), cpu(2)});
  (*net)(zeros({2, 6}));  // the deferred shapes
  const nn::ParameterPtr w = net->collect_params().at("0.weight");
  EXPECT_EQ(w->devices(), (std::vector<Device>{cpu(0), cpu(2)}));
  ASSERT_EQ(w->list_data().size(), 2u);
  EXPECT_EQ(w->data(cpu(2)).device(), cpu(2));
  EXPECT_EQ(to_vector<float>(w->data(cpu(2))), to_vector<float>(w->data()));
  EXPECT_EQ(w->list_grad().size(), 2u);
  EXPECT_EQ(w->grad(cpu(2)).device(), cpu(2));
  std::string msg = error_of<DeviceError>([&] { (*net)(zeros({2, 6}, DType::kFloat32, cpu(1))); });
  EXPECT_THAT(msg, HasSubstr(fmt::format("parameter '{}' has no replica on cpu(1): it was "
                                         "initialised on [cpu(0), cpu(2)]",
                                         w->name())));
  msg = error_of<ValueError>([&] { net->initialize(nn::Xavier(), {cpu(1), cpu(1)}, true); });
  EXPECT_THAT(msg, HasSubstr("device cpu(1) appears twice in [cpu(1), cpu(1)]"));
  msg = error_of<ValueError>([&] { net->initialize(nn::Xavier(), std::vector<Device>{}, true); });
  EXPECT_THAT(msg, HasSubstr("the list of devices is empty"));
}

TEST(Replicas, ResetDevicesCopiesTheValue) {
  const ScopedCpuDevices devices(3);
  auto net = make_net();
  net->initialize(nn::Xavier());
  (*net)(zeros({2, 6}));
  const std::vector<float> before = to_vector<float>(net->collect_params().at("1.weight")->data());
  net->reset_devices({cpu(1), cpu(2)});
  const nn::ParameterPtr w = net->collect_params().at("1.weight");
  EXPECT_EQ(w->device(), cpu(1));
  EXPECT_EQ(to_vector<float>(w->data(cpu(2))), before);
  EXPECT_EQ((*net)(zeros({2, 6}, DType::kFloat32, cpu(2))).device(), cpu(2));
  EXPECT_THROW(w->data(cpu(0)), DeviceError);
  net->reset_device(cpu(0));
  EXPECT_EQ(to_vector<float>(w->data(cpu(0))), before);
}

TEST(Replicas, SetDataWritesEveryReplica) {
  const ScopedCpuDevices devices(2);
  nn::Parameter p("p", Shape{3});
  p.initialize(nn::Zero(), {cpu(0), cpu(1)});
  p.set_data(full({3}, 2.0));
  for (const NDArray& r : p.list_data())
    EXPECT_EQ(to_vector<float>(r), std::vector<float>(3, 2.0f));
  EXPECT_EQ(p.list_data()[1].device(), cpu(1));
}

TEST(DataParallelTraining, ATrainerWithoutAStoreMakesADeviceStore) {
  const ScopedCpuDevices devices(2);
  auto net = make_net();
  net->initialize(nn::Xavier(), {cpu(0), cpu(1)});
  optim::Trainer trainer(net->collect_params(), optim::make_optimizer("sgd", 0.1));
  sum_step(*net, trainer);
  ASSERT_NE(trainer.kvstore(), nullptr);
  EXPECT_EQ(trainer.kvstore()->type(), "device");
}

}  // namespace
}  // namespace janus::parallel
