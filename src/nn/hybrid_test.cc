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

#include "testing/temp_dir.h"
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
        LayerCase{"Conv1D",
                  [] {
                    return std::make_shared<Conv1D>(
                        4, std::vector<int64_t>{3}, std::vector<int64_t>{2},
                        std::vector<int64_t>{1}, std::vector<int64_t>{1}, 1, "relu");
                  },
                  {2, 3, 9}},
        LayerCase{"Conv3D",
                  [] {
                    return std::make_shared<Conv3D>(4, std::vector<int64_t>{2},
                                                    std::vector<int64_t>{1},
                                                    std::vector<int64_t>{1, 0, 1});
                  },
                  {2, 2, 3, 4, 3}},
        LayerCase{"Conv2DTranspose",
                  [] {
                    return std::make_shared<Conv2DTranspose>(
                        4, std::vector<int64_t>{3}, std::vector<int64_t>{2},
                        std::vector<int64_t>{1}, std::vector<int64_t>{1}, std::vector<int64_t>{1},
                        1, "tanh");
                  },
                  {2, 3, 4, 5}},
        LayerCase{"Conv1DTranspose",
                  [] {
                    return std::make_shared<Conv1DTranspose>(2, std::vector<int64_t>{2},
                                                             std::vector<int64_t>{2});
                  },
                  {2, 3, 5}},
        LayerCase{"Conv3DTranspose",
                  [] {
                    return std::make_shared<Conv3DTranspose>(
                        4, std::vector<int64_t>{2}, std::vector<int64_t>{1},
                        std::vector<int64_t>{0}, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                        2);
                  },
                  {1, 2, 3, 2, 3}},
        LayerCase{"MaxPool2D", [] { return std::make_shared<MaxPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{"AvgPool2D", [] { return std::make_shared<AvgPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{
            "GlobalAvgPool2D", [] { return std::make_shared<GlobalAvgPool2D>(); }, {2, 3, 6, 6}},
        LayerCase{"BatchNorm", [] { return std::make_shared<BatchNorm>(); }, {4, 3, 2, 2}},
        LayerCase{"Dropout", [] { return std::make_shared<Dropout>(0.5); }, {8, 8}},
        LayerCase{"Flatten", [] { return std::make_shared<Flatten>(); }, {2, 3, 4}},
        LayerCase{"Activation", [] { return std::make_shared<Activation>("tanh"); }, {3, 4}},
        LayerCase{"LayerNorm", [] { return std::make_shared<LayerNorm>(); }, {3, 6}},
        LayerCase{"GroupNorm", [] { return std::make_shared<GroupNorm>(3); }, {2, 6, 2, 2}},
        LayerCase{"InstanceNorm",
                  [] { return std::make_shared<InstanceNorm>(-1, 1e-5, true, true); },
                  {2, 3, 4}},
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
  const Maker makers[] = {[] {
                            auto s = std::make_shared<Sequential>();
                            s->add(std::make_shared<Dense>(6),
                                   std::make_shared<Activation>("relu"));
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

// As in MXNet, static_shape does not refuse another shape (a DataLoader's smaller last batch):
// the block compiles a graph for it.
TEST(Hybridize, StaticShapeCompilesAnotherGraphForAnotherShape) {
  auto net = std::make_shared<Dense>(3);
  net->initialize();
  net->hybridize(true, {.static_alloc = true, .static_shape = true});
  (*net)(ones({4, 4}));
  const NDArray small = (*net)(ones({3, 4}));
  EXPECT_EQ(net->trace_count(), 2);
  net->hybridize(false);
  expect_bitwise(small, (*net)(ones({3, 4})));
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

// d2l's LeNet: sigmoid after the convolutions and the hidden dense layers, average pooling.
std::shared_ptr<Sequential> sigmoid_lenet() {
  auto net = std::make_shared<Sequential>();
  using V = std::vector<int64_t>;
  net->add(std::make_shared<Conv2D>(6, V{5}, V{1}, V{2}, V{1}, 1, "sigmoid"),
           std::make_shared<AvgPool2D>(),
           std::make_shared<Conv2D>(16, V{5}, V{1}, V{0}, V{1}, 1, "sigmoid"),
           std::make_shared<AvgPool2D>(), std::make_shared<Dense>(120, "sigmoid"),
           std::make_shared<Dense>(84, "tanh"), std::make_shared<Dense>(10));
  return net;
}

std::shared_ptr<Sequential> mlp() {
  auto net = std::make_shared<Sequential>();
  net->add(std::make_shared<Flatten>(), std::make_shared<Dense>(256, "relu"),
           std::make_shared<Dense>(10));
  return net;
}

// Gradients through a hybridized model equal the imperative ones, so Trainer works: with relu
// and with sigmoid and tanh, which the hybridized graph computes inside the products' calls
// (fuse_bias_activation) and differentiates from their outputs.
class HybridLenet : public ::testing::TestWithParam<bool> {};

TEST_P(HybridLenet, TrainingStepsMatchImperativeTraining) {
  const auto make = GetParam() ? sigmoid_lenet : lenet;
  const NDArray x = randn({8, 1, 28, 28}, 21);
  const NDArray label = from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  // Deferred initialisation happens in the first call: same seed, same draws for both.
  auto a = make();
  a->initialize(Xavier());
  seed(2);
  (*a)(x);
  auto b = make();
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

INSTANTIATE_TEST_SUITE_P(Hybridize, HybridLenet, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Sigmoid" : "Relu"; });

class ExportTest : public ::testing::Test {
 protected:
  std::string prefix() const { return (dir_ / "model").string(); }
  const janus::testing::TempDir dir_{janus::testing::test_scoped("janus_export_")};
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
  EXPECT_THAT(error_of<ValueError>([&] {
                SymbolBlock::imports(prefix() + "-symbol.json", {"data"},
                                     prefix() + "-0000.safetensors");
              }),
              HasSubstr("needs parameter '1.bias', which is neither an input nor in '" + prefix() +
                        "-0000.safetensors'"));
  EXPECT_THAT(error_of<ValueError>([&] { SymbolBlock::imports(prefix() + "-symbol.json", {"x"}); }),
              HasSubstr("the graph has no argument named 'x'"));
}

// Two inputs and two outputs (Gluon's forward(a, b) returning a tuple), with parameters.
class TwoInTwoOut : public Block {
 public:
  TwoInTwoOut() : Block("twoio") { dense_ = register_child(std::make_shared<Dense>(4), "dense"); }
  using Block::forward;
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override {
    return {(*dense_)(xs[0]) + xs[1], xs[0] * xs[1]};
  }

 private:
  std::shared_ptr<Dense> dense_;
};

// The same two-input, two-output block imperatively and hybridized: equal outputs, and equal
// gradients of the parameters and of both inputs, whichever outputs the loss reads (an output
// that it does not read has a zero gradient).
TEST(Hybridize, TwoInputTwoOutputBlockAgreesWithImperative) {
  const NDArray a = randn({3, 4}, 31), b = randn({3, 4}, 32);
  seed(5);
  auto imperative = std::make_shared<TwoInTwoOut>();
  imperative->initialize(Xavier());
  (*imperative)({a, b});
  seed(5);
  auto hybrid = std::make_shared<TwoInTwoOut>();
  hybrid->initialize(Xavier());
  hybrid->hybridize();
  (*hybrid)({a, b});
  for (int call = 0; call < 2; ++call) {
    const std::vector<NDArray> yi = (*imperative)({a, b}), yh = (*hybrid)({a, b});
    ASSERT_EQ(yi.size(), 2u);
    ASSERT_EQ(yh.size(), 2u);
    expect_bitwise(yi[0], yh[0]);
    expect_bitwise(yi[1], yh[1]);
  }
  EXPECT_EQ(hybrid->trace_count(), 1);
  EXPECT_THAT(hybrid->symbol().list_arguments(), ::testing::Contains("data1"));
  EXPECT_EQ(hybrid->symbol().num_outputs(), 2u);
  // Heads: both outputs, the first only, the second only.
  for (int heads = 0; heads < 3; ++heads) {
    std::vector<NDArray> grads[2];
    for (auto* net : {static_cast<Block*>(imperative.get()), static_cast<Block*>(hybrid.get())}) {
      // A parameter that backward does not reach keeps its old gradient imperatively, where
      // the hybridized block's one backward node writes zeros: start both from zeros.
      net->collect_params().zero_grad();
      const NDArray xa = a.detach(), xb = b.detach();
      autograd::attach_grad(xa);
      autograd::attach_grad(xb);
      NDArray l;
      {
        autograd::RecordScope record;
        const std::vector<NDArray> ys = (*net)({xa, xb});
        l = heads == 0 ? sum(ys[0] * ys[1]) : heads == 1 ? sum(ys[0]) : sum(ys[1] * ys[1]);
      }
      autograd::backward(l);
      auto& g = grads[net == hybrid.get() ? 1 : 0];
      g.push_back(autograd::grad(xa));
      g.push_back(autograd::grad(xb));
      for (const auto& [name, p] : net->collect_params()) g.push_back(p->grad());
    }
    ASSERT_EQ(grads[0].size(), grads[1].size());
    for (size_t i = 0; i < grads[0].size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "heads " << heads << ", gradient " << i);
      expect_bitwise(grads[0][i], grads[1][i]);
    }
  }
  EXPECT_EQ(hybrid->trace_count(), 2);  // inference, then training mode
  wait_all();
}

// A hybridized block called twice while recording has two backward calls: each parameter's
// gradient is the sum of both, as imperatively (the compiled backward of only one of them may
// write the gradient buffer; the other's would overwrite it).
TEST(Hybridize, ABlockCalledTwiceWhileRecordingGetsTheSumOfBothGradients) {
  const NDArray a = randn({2, 4}, 41), b = randn({2, 4}, 42);
  std::vector<float> grads[2];
  for (const bool hybridized : {false, true}) {
    seed(7);
    auto net = std::make_shared<Sequential>();
    net->add(std::make_shared<Dense>(3, "relu"), std::make_shared<Dense>(2));
    net->initialize(Xavier());
    if (hybridized) net->hybridize();
    for (int step = 0; step < 2; ++step) {  // the second step runs the cached graphs
      NDArray l;
      {
        autograd::RecordScope record;
        l = sum((*net)(a)*2.0) + sum((*net)(b)*5.0);
      }
      autograd::backward(l);
    }
    for (const auto& [name, p] : net->collect_params()) {
      for (float v : to_vector<float>(p->grad())) grads[hybridized].push_back(v);
    }
    EXPECT_EQ(net->trace_count(), hybridized ? 1 : 0);
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (size_t i = 0; i < grads[0].size(); ++i) {
    EXPECT_NEAR(grads[0][i], grads[1][i], 1e-5 * (1 + std::abs(grads[0][i]))) << i;
  }
  wait_all();
}

// Each child's outputs are the next one's inputs, imperatively and hybridized.
TEST(Hybridize, SequentialChainsBlocksWithSeveralInputsAndOutputs) {
  const NDArray a = randn({2, 4}, 41), b = randn({2, 4}, 42);
  std::vector<NDArray> ys[2];
  for (int hybridized = 0; hybridized < 2; ++hybridized) {
    seed(6);
    auto net = std::make_shared<Sequential>();
    net->add(std::make_shared<TwoInTwoOut>(), std::make_shared<TwoInTwoOut>());
    net->initialize(Xavier());
    if (hybridized == 1) net->hybridize();
    ys[hybridized] = (*net)({a, b});
  }
  ASSERT_EQ(ys[0].size(), 2u);
  ASSERT_EQ(ys[1].size(), 2u);
  expect_bitwise(ys[0][0], ys[1][0]);
  expect_bitwise(ys[0][1], ys[1][1]);
}

class OneInTwoOut : public Block {
 public:
  OneInTwoOut() : Block("oneintwoout") {}
  using Block::forward;
  std::vector<NDArray> forward(const std::vector<NDArray>& xs) override {
    return {xs.at(0), xs.at(0) * xs.at(0)};
  }
};

// forward returns its input as an output: recording the hybridized call must not take over the
// input's autograd identity (a leaf with a gradient buffer).
TEST(Hybridize, AnInputReturnedAsAnOutputKeepsItsGradient) {
  const NDArray x0 = randn({2, 3}, 61);
  NDArray grads[2];
  for (int hybridized = 0; hybridized < 2; ++hybridized) {
    OneInTwoOut block;
    if (hybridized == 1) block.hybridize();
    const NDArray x = x0.detach();
    autograd::attach_grad(x);
    NDArray l;
    {
      autograd::RecordScope record;
      const std::vector<NDArray> ys = block(std::vector<NDArray>{x});
      l = sum(ys[0]) + sum(ys[1]);
    }
    autograd::backward(l);
    grads[hybridized] = autograd::grad(x);  // still a leaf: ValueError otherwise
  }
  expect_bitwise(grads[0], grads[1]);
}

class Forwardless : public Block {
 public:
  Forwardless() : Block("forwardless") {}
};

TEST(Block, InputAndOutputCountsAreChecked) {
  Forwardless none;
  EXPECT_THAT(error_of<NotImplementedError>([&] { none(ones({1})); }),
              HasSubstr("overrides neither form of forward"));
  Dense dense(2);
  dense.initialize();
  EXPECT_THAT(error_of<ValueError>([&] {
                dense({ones({1, 2}), ones({1, 2})});
              }),
              HasSubstr("forward takes one input, got 2"));
  OneInTwoOut split;
  EXPECT_THAT(error_of<ValueError>([&] {
                split(ones({1, 4}));
              }),
              HasSubstr("call the block with a list of inputs"));
  EXPECT_EQ(split(std::vector<NDArray>{ones({1, 4})}).size(), 2u);
  wait_all();
}

// Two logical CPU devices while alive; the count is restored after every array is released.
struct TwoCpuDevices {
  int saved = num_cpu_devices();
  TwoCpuDevices() { set_num_cpu_devices(std::max(saved, 2)); }
  ~TwoCpuDevices() {
    wait_all();  // the test's arrays are gone: release cpu(1) memory while cpu(1) exists
    set_num_cpu_devices(saved);
  }
};

// The one compiled-graph cache keys on the device: SymbolBlock's own cache (shape and dtype
// only) reused a graph compiled for cpu(0) for an input on cpu(1).
TEST(SymbolBlock, CompilesAgainForAnInputOnAnotherDevice) {
  const TwoCpuDevices devices;
  SymbolBlock block(graph::Symbol::op("relu", {graph::Symbol::var("data")}));
  const NDArray x = randn({2, 3}, 7);
  const NDArray y0 = block(x);
  const NDArray y1 = block(copyto(x, cpu(1)));
  EXPECT_EQ(y0.device(), cpu(0));
  EXPECT_EQ(y1.device(), cpu(1));
  expect_bitwise(y0, y1);
}

TEST_F(ExportTest, TwoInputTwoOutputBlockRunsFromItsFiles) {
  auto net = std::make_shared<TwoInTwoOut>();
  net->initialize(Xavier());
  net->hybridize();
  const NDArray a = randn({3, 4}, 51), b = randn({3, 4}, 52);
  const std::vector<NDArray> ys = (*net)({a, b});
  net->export_model(prefix());
  graph::Metadata meta;
  graph::load_safetensors(prefix() + "-0000.safetensors", &meta);
  EXPECT_THAT(meta, ::testing::Contains(
                        std::pair<const std::string, std::string>{"inputs", "data0,data1"}));
  auto imported = SymbolBlock::imports(prefix() + "-symbol.json", {"data0", "data1"},
                                       prefix() + "-0000.safetensors");
  const std::vector<NDArray> yi = (*imported)({a, b});
  deploy::Predictor predictor(prefix() + "-symbol.json", prefix() + "-0000.safetensors",
                              {"data0", "data1"});
  const std::vector<NDArray> yp = predictor.run(std::vector{a, b});
  ASSERT_EQ(yi.size(), 2u);
  ASSERT_EQ(yp.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    expect_bitwise(yi[i], ys[i]);
    expect_bitwise(yp[i], ys[i]);
  }
  // Inputs in the other order are the other arguments.
  auto swapped = SymbolBlock::imports(prefix() + "-symbol.json", {"data1", "data0"},
                                      prefix() + "-0000.safetensors");
  expect_bitwise((*swapped)({b, a})[0], ys[0]);
}

}  // namespace
}  // namespace janus::nn
