// Parameters, blocks, Sequential naming and parameter collection, initializers.
#include "janus/nn/block.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "janus/engine/array.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Parameter, DeferredInitialisationWaitsForTheShape) {
  Parameter p("w", Shape{4, 0}, Constant(2.0));
  p.initialize(Uniform(), cpu());
  EXPECT_TRUE(p.deferred());
  EXPECT_THAT(error_of<ValueError>([&] { p.data(); }),
              HasSubstr("parameter 'w' has shape [4, 0] with unknown (0) extents, so its "
                        "initialisation is deferred"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                p.infer_shape(Shape{3, 5});
              }),
              HasSubstr("parameter 'w' has shape [4, 0] (0: not known yet), cannot become [3, 5]"));
  p.infer_shape(Shape{4, 5});
  p.finish_deferred_init();
  EXPECT_EQ(p.data().shape(), (Shape{4, 5}));
  EXPECT_EQ(to_vector<float>(p.data()), std::vector<float>(20, 2.0f));  // its own init wins
  EXPECT_EQ(to_vector<float>(p.grad()), std::vector<float>(20, 0.0f));
}

TEST(Parameter, ZeroGradZeroesTheBufferThatOthersHold) {
  ScopedCpuDevices devices(2);
  Parameter p("w", Shape{3}, Constant(1.0), DType::kFloat32, autograd::GradReq::kAdd);
  p.initialize(nullptr, {cpu(0), cpu(1)});
  for (Device d : {cpu(0), cpu(1)}) {
    const NDArray x = p.data(d);
    NDArray y;
    {
      autograd::RecordScope record;
      y = sum(mul(x, x));
    }
    autograd::backward(y);
  }
  const NDArray held = p.grad(cpu(1));
  EXPECT_EQ(to_vector<float>(held), std::vector<float>(3, 2.0f));
  p.zero_grad();
  EXPECT_EQ(to_vector<float>(held), std::vector<float>(3, 0.0f));
  EXPECT_EQ(to_vector<float>(p.grad(cpu(0))), std::vector<float>(3, 0.0f));
}

TEST(Parameter, UninitialisedAndGradlessParametersSaySo) {
  Parameter p("dense9_weight", Shape{2, 2});
  EXPECT_THAT(error_of<ValueError>([&] { p.data(); }),
              HasSubstr("parameter 'dense9_weight' has not been initialised: call initialize()"));
  Parameter q("stat", Shape{2}, Zero(), DType::kFloat32, autograd::GradReq::kNull);
  q.initialize(nullptr);
  EXPECT_THAT(error_of<ValueError>([&] { q.grad(); }),
              HasSubstr("parameter 'stat' has grad_req null, so it has no gradient"));
}

TEST(Block, SequentialNamesAndCollectsParametersByStructure) {
  Sequential net;
  net.add(std::make_shared<Dense>(8, "relu"), std::make_shared<Dense>(3));
  EXPECT_THAT(net.collect_params().names(),
              ElementsAre("0.weight", "0.bias", "1.weight", "1.bias"));
  EXPECT_THAT(net.collect_params(".*weight").names(), ElementsAre("0.weight", "1.weight"));
  EXPECT_THAT(net[0]->name(), HasSubstr("dense"));
  EXPECT_THAT(error_of<ValueError>([&] { net.collect_params("(["); }),
              HasSubstr("select: '([' is not a valid regular expression"));
  EXPECT_THAT(error_of<ValueError>([&] { net.collect_params().at("2.weight"); }),
              HasSubstr("no parameter named '2.weight'; the parameters are: 0.weight, 0.bias"));
  EXPECT_THAT(net.summary(), HasSubstr("(0): Dense(None -> 8, relu)"));
}

TEST(Block, DenseInfersItsInputSizeAndComputesXWPlusB) {
  Sequential net;
  auto dense = std::make_shared<Dense>(2, "", true, true, 0, Constant(1.0), Constant(0.5));
  net.add(dense);
  net.initialize();
  const NDArray x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(to_vector<float>(net(x)), (std::vector<float>{6.5f, 6.5f, 15.5f, 15.5f}));
  EXPECT_EQ(dense->weight()->shape(), (Shape{2, 3}));
  EXPECT_THAT(error_of<ShapeError>([&] {
                net(zeros({2, 4}));
              }),
              HasSubstr(dense->name() +
                        ": input of shape [2, 4] has 4 features, expected 3 (weight [2, 3])"));
  // Images are flattened: [N, 1, 1, 3] is 3 features.
  EXPECT_EQ(net(reshape(x, {2, 1, 1, 3})).shape(), (Shape{2, 2}));
}

TEST(Block, XavierStaysWithinItsBound) {
  seed(3);
  const NDArray w = Xavier()->make(Shape{64, 32}, DType::kFloat32, cpu());
  const double bound = std::sqrt(3.0 / 48.0);
  for (float v : to_vector<float>(w)) ASSERT_LE(std::fabs(v), bound);
  EXPECT_THAT(error_of<ValueError>([] { Xavier()->make(Shape{5}, DType::kFloat32, cpu()); }),
              HasSubstr("Xavier(uniform, avg, 3): cannot initialise an array of shape [5]"));
}

TEST(Block, ConvAndPoolLayersChainLikeLeNet) {
  Sequential net;
  net.add(std::make_shared<Conv2D>(6, std::vector<int64_t>{5}, std::vector<int64_t>{1},
                                   std::vector<int64_t>{2}, std::vector<int64_t>{1}, 1, "relu"),
          std::make_shared<MaxPool2D>(), std::make_shared<BatchNorm>(),
          std::make_shared<Conv2D>(16, std::vector<int64_t>{5}), std::make_shared<AvgPool2D>(),
          std::make_shared<GlobalAvgPool2D>(), std::make_shared<Flatten>(),
          std::make_shared<Dense>(10));
  net.initialize(Xavier());
  const NDArray y = net(random_uniform(0, 1, {2, 1, 28, 28}));
  EXPECT_EQ(y.shape(), (Shape{2, 10}));
  EXPECT_EQ(net.collect_params().at("2.running_var")->shape(), (Shape{6}));
  EXPECT_THAT(
      error_of<ShapeError>([&] {
        net(zeros({2, 3, 28, 28}));
      }),
      HasSubstr("input of shape [2, 3, 28, 28] has 3 channels, expected 1 (weight [6, 1, 5, 5])"));
  EXPECT_THAT(
      error_of<ShapeError>([&] {
        net(zeros({2, 28, 28}));
      }),
      HasSubstr(
          "input has shape [2, 28, 28], expected 4 dimensions [batch, channels, height, width]"));
}

TEST(Block, BatchNormAndDropoutFollowTrainingMode) {
  BatchNorm bn;
  bn.initialize();
  const NDArray x = from_vector<float>({1, 3, 5, 7}, {4, 1});
  const std::vector<float> infer = to_vector<float>(bn(x));  // running stats 0 and 1
  EXPECT_NEAR(infer[3], 7.0f, 1e-3);
  {
    autograd::RecordScope train(true);
    const std::vector<float> y = to_vector<float>(bn(x));
    EXPECT_NEAR(y[0] + y[3], 0.0f, 1e-5);
  }
  EXPECT_NEAR(to_vector<float>(bn.running_mean()->data())[0], 0.4f, 1e-5);  // 0.1 * mean 4
  Dropout drop(0.5);
  const NDArray ones_in = ones({1000});
  EXPECT_EQ(to_vector<float>(drop(ones_in)), std::vector<float>(1000, 1.0f));
  autograd::RecordScope train(true);
  const std::vector<float> dropped = to_vector<float>(drop(ones_in));
  const auto zeros_n = std::count(dropped.begin(), dropped.end(), 0.0f);
  EXPECT_GT(zeros_n, 400);
  EXPECT_LT(zeros_n, 600);
}

TEST(Block, ActivationAndLayerArgumentsAreChecked) {
  EXPECT_THAT(error_of<ValueError>([] { Dense(4, "rleu"); }),
              HasSubstr("Dense: attribute 'activation' is 'rleu', expected one of '' (none), "
                        "'relu', 'sigmoid', 'tanh', 'softrelu', 'gelu', 'leaky'"));
  EXPECT_THAT(error_of<ValueError>([] { Dense(0); }),
              HasSubstr("Dense: units is 0, expected a positive number"));
  EXPECT_THAT(error_of<ValueError>([] { Dropout(1.0); }),
              HasSubstr("Dropout: rate is 1, expected a value in [0, 1)"));
}

}  // namespace
}  // namespace janus::nn
