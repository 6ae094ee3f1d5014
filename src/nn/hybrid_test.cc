// Hybridization of blocks: every built-in layer gives bitwise its imperative results when
// hybridized; tracing happens once per signature; export, SymbolBlock::imports and the
// deploy Predictor reproduce the in-memory graph bitwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "janus/autograd/autograd.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/graph/safetensors.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/nn/loss.h"
#include "janus/nn/symbol_block.h"
#include "janus/ops/ops.h"
#include "janus/optim/optimizer.h"
#include "janus/optim/trainer.h"
#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

NDArray randn(Shape s, uint64_t seed_value) {
  seed(seed_value);
  return random_normal(0, 1, s);
}

void expect_bitwise(const NDArray& a, const NDArray& b) {
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(to_vector<float>(a), to_vector<float>(b));
}

using Maker = std::function<BlockPtr()>;

// Runs the same freshly made block (same seed for its parameters) imperatively and hybridized,
// twice each (the second hybridized call uses the cached graph).
void check_layer(const Maker& make, const NDArray& x, bool training) {
  seed(11);
  BlockPtr a = make();
  a->initialize(Xavier());
  seed(11);
  BlockPtr b = make();
  b->initialize(Xavier());
  b->hybridize();
  for (int call = 0; call < 2; ++call) {
    seed(100 + static_cast<uint64_t>(call));  // dropout draws the same numbers in both
    NDArray ya, yb;
    if (training) {
      autograd::RecordScope record(true);
      ya = (*a)(x);
    } else {
      ya = (*a)(x);
    }
    seed(100 + static_cast<uint64_t>(call));
    if (training) {
      autograd::RecordScope record(true);
      yb = (*b)(x);
    } else {
      yb = (*b)(x);
    }
    expect_bitwise(ya, yb);
  }
  EXPECT_EQ(b->trace_count(), 1) << a->describe();
  // Parameters and running statistics end equal too (batch norm updates them in place).
  const ParameterDict pa = a->collect_params(), pb = b->collect_params();
  for (const auto& [name, p] : pa) expect_bitwise(p->data(), pb.at(name)->data());
}

struct LayerCase {
  std::string name;
  Maker make;
  Shape input;
};

class EveryLayer : public ::testing::TestWithParam<LayerCase> {};

TEST_P(EveryLayer, HybridizedEqualsImperativeInBothModes) {
  const LayerCase& c = GetParam();
  const NDArray x = randn(c.input, 5);
  check_layer(c.make, x, false);
  check_layer(c.make, x, true);
}

INSTANTIATE_TEST_SUITE_P(
    Nn, EveryLayer,
    ::testing::Values(
        LayerCase{"Dense", [] { return std::make_shared<Dense>(7, "relu"); }, {4, 5}},
        LayerCase{"Conv2D",
                  [] {
                    return std::make_shared<Conv2D>(4, std::vector<int64_t>{3},
                                                    std::vector<int64_t>{1},
                                                    std::vector<int64_t>{1});
                  },
                  {2, 3, 6, 6}},
        LayerCase{"MaxPool2D", [] { return std::make_shared<MaxPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{"AvgPool2D", [] { return std::make_shared<AvgPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{
            "GlobalAvgPool2D", [] { return std::make_shared<GlobalAvgPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{"BatchNorm", [] { return std::make_shared<BatchNorm>(); }, {4, 3, 2, 2}},
        LayerCase{"Dropout", [] { return std::make_shared<Dropout>(0.5); }, {8, 8}},
        LayerCase{"Flatten", [] { return std::make_shared<Flatten>(); }, {2, 3, 4}},
        LayerCase{"Activation", [] { return std::make_shared<Activation>("tanh"); }, {3, 4}},
        LayerCase{"LayerNorm", [] { return std::make_shared<LayerNorm>(); }, {3, 6}},
        LayerCase{"Sequential",
                  [] {
                    auto s = std::make_shared<Sequential>();
                    s->add(std::make_shared<Conv2D>(
                               6, std::vector<int64_t>{5}, std::vector<int64_t>{1},
                               std::vector<int64_t>{2}, std::vector<int64_t>{1}, 1, "relu"),
                           std::make_shared<MaxPool2D>(), std::make_shared<Dense>(10));
                    return s;
                  },
                  {2, 1, 8, 8}},
        LayerCase{"Concurrent",
                  [] {
                    auto c = std::make_shared<Concurrent>(1);
                    c->add(std::make_shared<Dense>(3)).add(std::make_shared<Dense>(2, "relu"));
                    return c;
                  },
                  {4, 5}}),
    [](const auto& info) { return info.param.name; });

// A relu after a Dense: imperatively two calls (or Dense's own fused call), hybridized one
// fused call (fuse_bias_activation). A NaN input stays NaN on both paths, bit for bit
// (docs/design/numerics.md).
TEST(Hybridize, FusedReluKeepsNanLikeTheImperativeRelu) {
  std::vector<float> xs = {std::numeric_limits<float>::quiet_NaN(), 1, 2, 3, 4};
  for (int i = 0; i < 15; ++i) xs.push_back(static_cast<float>(i % 7) - 3.0f);
  const NDArray x = from_vector<float>(xs, {4, 5});
  const Maker makers[] = {
      [] {
        auto s = std::make_shared<Sequential>();
        s->add(std::make_shared<Dense>(6), std::make_shared<Activation>("relu"));
        return s;
      },
      [] { return std::make_shared<Dense>(6, "relu"); }};
  for (const Maker& make : makers) {
    seed(3);
    BlockPtr a = make();
    a->initialize(Xavier());
    seed(3);
    BlockPtr b = make();
    b->initialize(Xavier());
    b->hybridize();
    seed(4);  // the deferred initialization draws the same weights in both
    const std::vector<float> ya = to_vector<float>((*a)(x));
    seed(4);
    const std::vector<float> yb = to_vector<float>((*b)(x));
    ASSERT_EQ(ya.size(), yb.size());
    for (size_t i = 0; i < ya.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(ya[i]), std::bit_cast<uint32_t>(yb[i])) << i;
      EXPECT_EQ(std::isnan(yb[i]), i < 6) << i;  // the NaN row, and only it
    }
  }
}

TEST(Hybridize, EmbeddingTakesIntegerIndices) {
  const NDArray idx = from_vector<int64_t>({0, 3, 1, 3}, {2, 2});
  seed(1);
  auto a = std::make_shared<Embedding>(5, 3);
  a->initialize(Xavier());
  seed(1);
  auto b = std::make_shared<Embedding>(5, 3);
  b->initialize(Xavier());
  b->hybridize();
  expect_bitwise((*a)(idx), (*b)(idx));
}

// A block whose forward has a side effect (the seed's print inside hybrid_forward).
class Counting : public Block {
 public:
  Counting() : Block("counting") { register_child(std::make_shared<Dense>(3)); }
  NDArray forward(const NDArray& x) override {
    ++calls;
    return (*children()[0].second)(x);
  }
  int calls = 0;
};

TEST(Hybridize, ForwardRunsOnlyWhileTracingOncePerSignature) {
  auto net = std::make_shared<Counting>();
  net->initialize();
  net->hybridize();
  for (int i = 0; i < 3; ++i) wait_to_read((*net)(ones({2, 4})));
  EXPECT_EQ(net->calls, 1);
  EXPECT_EQ(net->trace_count(), 1);
  EXPECT_THAT(net->last_trace_reason(),
              HasSubstr("first call ([2, 4] float32 on cpu(0), inference)"));
  (*net)(ones({5, 4}));
  EXPECT_EQ(net->trace_count(), 2);
  EXPECT_THAT(net->last_trace_reason(), HasSubstr("new input signature [5, 4]"));
  {
    autograd::RecordScope record(true);  // training mode is part of the signature
    (*net)(ones({5, 4}));
  }
  EXPECT_EQ(net->trace_count(), 3);
  net->hybridize(false);
  (*net)(ones({2, 4}));
  (*net)(ones({2, 4}));
  EXPECT_EQ(net->calls, 5);
  wait_all();
}

TEST(Hybridize, TheCacheIsBounded) {
  auto net = std::make_shared<Counting>();
  net->initialize();
  net->hybridize(true, {.cache_size = 2});
  for (int64_t n : {1, 2, 3, 1}) (*net)(ones({n, 4}));
  EXPECT_EQ(net->trace_count(), 4);  // batch 1 was evicted by batch 3
  (*net)(ones({1, 4}));
  EXPECT_EQ(net->trace_count(), 4);
  // Tests end with the engine idle: no kernel is in flight when the process exits.
  wait_all();
}

TEST(Hybridize, StaticShapeRefusesAnotherShape) {
  auto net = std::make_shared<Dense>(3);
  net->initialize();
  net->hybridize(true, {.static_alloc = true, .static_shape = true});
  (*net)(ones({2, 4}));
  EXPECT_THAT(error_of<ShapeError>([&] {
                (*net)(ones({3, 4}));
              }),
              HasSubstr("hybridized with static_shape for input shape [2, 4], got [3, 4]"));
  wait_all();
}

class Peeking : public Block {
 public:
  Peeking() : Block("peeking") {}
  NDArray forward(const NDArray& x) override {
    if (item<float>(sum(x)) > 0) return x;  // data-dependent control flow cannot be traced
    return x * 2.0;
  }
};

TEST(Hybridize, ReadingAValueWhileTracingIsATraceError) {
  auto net = std::make_shared<Peeking>();
  EXPECT_GT(to_vector<float>((*net)(ones({2}))).size(), 0u);  // fine imperatively
  net->hybridize();
  EXPECT_THAT(error_of<TraceError>([&] { (*net)(ones({2})); }),
              HasSubstr("item: reads the value of a symbolic array (shape [], float32) while a "
                        "hybridized block is traced"));
}

std::shared_ptr<Sequential> lenet() {
  auto net = std::make_shared<Sequential>();
  using V = std::vector<int64_t>;
  net->add(std::make_shared<Conv2D>(6, V{5}, V{1}, V{2}, V{1}, 1, "relu"),
           std::make_shared<MaxPool2D>(),
           std::make_shared<Conv2D>(16, V{5}, V{1}, V{0}, V{1}, 1, "relu"),
           std::make_shared<MaxPool2D>(), std::make_shared<Dense>(120, "relu"),
           std::make_shared<Dense>(84, "relu"), std::make_shared<Dense>(10));
  return net;
}

std::shared_ptr<Sequential> mlp() {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Flatten>(), std::make_shared<Dense>(256, "relu"),
           std::make_shared<Dense>(10));
  return net;
}

// Gradients through a hybridized model equal the imperative ones, so Trainer works.
TEST(Hybridize, TrainingStepsMatchImperativeTraining) {
  const NDArray x = randn({8, 1, 28, 28}, 21);
  const NDArray label = from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  // Deferred initialisation happens in the first call: same seed, same draws for both.
  auto a = lenet();
  a->initialize(Xavier());
  seed(2);
  (*a)(x);
  auto b = lenet();
  b->initialize(Xavier());
  b->hybridize();
  seed(2);
  (*b)(x);
  optim::Trainer ta(a->collect_params(), optim::make_optimizer("sgd", 0.1, {}));
  optim::Trainer tb(b->collect_params(), optim::make_optimizer("sgd", 0.1, {}));
  SoftmaxCrossEntropyLoss loss;
  for (int step = 0; step < 3; ++step) {
    for (auto [net, trainer] : {std::pair{a.get(), &ta}, std::pair{b.get(), &tb}}) {
      NDArray l;
      {
        autograd::RecordScope record;
        l = loss((*net)(x), label);
      }
      autograd::backward(l);
      trainer->step(8);
    }
  }
  const ParameterDict pa = a->collect_params(), pb = b->collect_params();
  for (const auto& [name, p] : pa) expect_bitwise(p->data(), pb.at(name)->data());
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("janus_export_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string prefix() const { return (dir_ / "model").string(); }
  std::filesystem::path dir_;
};

TEST_F(ExportTest, BothDemoModelsRunBitwiseFromTheirFiles) {
  for (auto& [net, shape] :
       {std::pair{std::static_pointer_cast<Block>(mlp()), Shape{4, 1, 28, 28}},
        std::pair{std::static_pointer_cast<Block>(lenet()), Shape{4, 1, 28, 28}}}) {
    net->initialize(Xavier());
    EXPECT_THAT(error_of<ValueError>([&] { net->export_model(prefix()); }),
                HasSubstr("no graph yet: call hybridize() and then the block once"));
    net->hybridize();
    const NDArray x = randn(shape, 9);
    const NDArray y = (*net)(x);
    net->export_model(prefix(), 3);
    ASSERT_TRUE(std::filesystem::exists(prefix() + "-symbol.json"));
    ASSERT_TRUE(std::filesystem::exists(prefix() + "-0003.safetensors"));

    auto imported =
        SymbolBlock::imports(prefix() + "-symbol.json", {"data"}, prefix() + "-0003.safetensors");
    expect_bitwise((*imported)(x), y);
    deploy::Predictor predictor(prefix() + "-symbol.json", prefix() + "-0003.safetensors");
    expect_bitwise(predictor.run(x), y);
  }
}

TEST_F(ExportTest, ImportsNamesMissingAndUnknownParameters) {
  auto net = mlp();
  net->initialize();
  net->hybridize();
  (*net)(ones({1, 784}));
  net->export_model(prefix());
  graph::save_safetensors(prefix() + "-0000.safetensors", {{"1.weight", ones({256, 784})}});
  EXPECT_THAT(
      error_of<ValueError>([&] {
        SymbolBlock::imports(prefix() + "-symbol.json", {"data"}, prefix() + "-0000.safetensors");
      }),
      HasSubstr("needs parameter '1.bias', which '" + prefix() + "-0000.safetensors' lacks"));
  EXPECT_THAT(error_of<ValueError>([&] { SymbolBlock::imports(prefix() + "-symbol.json", {"x"}); }),
              HasSubstr("the graph has no argument named 'x'"));
}

}  // namespace
}  // namespace janus::nn
