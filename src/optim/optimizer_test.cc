// SGD and Adam against hand-computed steps, their state and counts, and make_optimizer.
#include "janus/optim/optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::optim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void expect_near(const NDArray& a, const std::vector<double>& want, double tol) {
  const std::vector<double> got = to_vector<double>(a);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(SGD, PlainStepsHaveNoState) {
  SGD sgd(0.1);
  EXPECT_TRUE(sgd.state_names().empty());
  const NDArray w = from_vector<double>({1, 2}, {2});
  const NDArray g = from_vector<double>({0.5, -1}, {2});
  sgd.update(0, w, g);
  expect_near(w, {0.95, 2.1}, 1e-15);
  EXPECT_TRUE(sgd.state(0).empty());
  EXPECT_EQ(sgd.update_count(0), 1);
}

TEST(SGD, MomentumMatchesHandComputedSteps) {
  SGD sgd(/*learning_rate=*/0.1, /*momentum=*/0.9);
  EXPECT_THAT(sgd.state_names(), ElementsAre("mom"));
  const NDArray w = from_vector<double>({1, 2}, {2});
  const NDArray g = from_vector<double>({0.5, -1}, {2});
  sgd.update(0, w, g);
  // mom = -0.1 g = [-0.05, 0.1]; w = [0.95, 2.1]
  expect_near(sgd.state(0)[0], {-0.05, 0.1}, 1e-15);
  expect_near(w, {0.95, 2.1}, 1e-15);
  sgd.update(0, w, g);
  // mom = 0.9 [-0.05, 0.1] - 0.1 g = [-0.095, 0.19]; w = [0.855, 2.29]
  expect_near(sgd.state(0)[0], {-0.095, 0.19}, 1e-15);
  expect_near(w, {0.855, 2.29}, 1e-15);
  EXPECT_EQ(sgd.update_count(0), 2);
  EXPECT_EQ(sgd.num_update(), 2);
}

TEST(SGD, RescaleDecayAndClippingApplyInMXNetOrder) {
  SGD sgd(/*learning_rate=*/1.0, /*momentum=*/0.0, /*wd=*/0.1);
  sgd.set_rescale_grad(0.5);
  sgd.set_clip_gradient(1.0);
  const NDArray w = from_vector<double>({2, 2}, {2});
  const NDArray g = from_vector<double>({1, 10}, {2});
  sgd.update(0, w, g);
  // g = clip(0.5 grad, 1) + 0.1 w = [0.5 + 0.2, 1 + 0.2]
  expect_near(w, {2 - 0.7, 2 - 1.2}, 1e-15);
}

TEST(Adam, MatchesHandComputedStepsWithAPerParameterStepCount) {
  Adam adam(/*learning_rate=*/0.01);
  EXPECT_THAT(adam.state_names(), ElementsAre("mean", "var"));
  const NDArray w0 = from_vector<double>({1.0}, {1}), w1 = from_vector<double>({1.0}, {1});
  const NDArray g = from_vector<double>({0.5}, {1});
  adam.update(0, w0, g);
  adam.update(0, w0, g);
  // With a constant gradient m_hat = g and v_hat = g^2 at every step: each step is lr * 0.5 /
  // (0.5 + eps).
  const double step = 0.01 * 0.5 / (0.5 + 1e-8);
  expect_near(w0, {1 - 2 * step}, 1e-14);
  expect_near(adam.state(0)[0], {0.095}, 1e-16);
  expect_near(adam.state(0)[1], {0.00049975}, 1e-18);
  // Parameter 1's first update is its own step 1 (bias correction by its own count).
  adam.update(1, w1, g);
  expect_near(w1, {1 - step}, 1e-15);
  EXPECT_EQ(adam.update_count(1), 1);
  EXPECT_EQ(adam.num_update(), 2);
}

TEST(Adam, WeightDecayIsAddedToTheGradient) {
  Adam adam(0.1, 0.9, 0.999, 1e-8, /*wd=*/1.0);
  const NDArray w = from_vector<double>({2.0}, {1});
  adam.update(0, w, zeros({1}, DType::kFloat64));
  // g = wd w = 2: the first bias-corrected step is lr * g / (|g| + eps).
  expect_near(w, {2.0 - 0.1 * 2.0 / (2.0 + 1e-8)}, 1e-14);
}

TEST(Optimizer, SetStateAndResetReplaceTheStateAndCounts) {
  SGD sgd(0.1, 0.5);
  const NDArray w = zeros({2});
  sgd.set_state(3, {full({2}, 1.0)}, 7);
  EXPECT_EQ(sgd.update_count(3), 7);
  EXPECT_EQ(sgd.num_update(), 7);
  sgd.update(3, w, zeros({2}));
  // mom = 0.5 * 1 - 0: the loaded momentum is used.
  EXPECT_EQ(to_vector<float>(w), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(sgd.update_count(3), 8);
  EXPECT_THAT(error_of<ValueError>([&] {
                sgd.set_state(0, {zeros({2}), zeros({2})}, 1);
              }),
              HasSubstr("sgd: set_state of parameter 0: got 2 arrays, expected 1 (mom)"));
  sgd.reset();
  EXPECT_EQ(sgd.num_update(), 0);
  EXPECT_TRUE(sgd.state(3).empty());
}

TEST(Optimizer, MakeOptimizerBuildsByNameAndListsTheValidOnes) {
  OptimizerPtr sgd = make_optimizer("SGD", 0.5, {.momentum = 0.9, .wd = 1e-4, .clip_gradient = 2});
  EXPECT_EQ(sgd->name(), "sgd");
  EXPECT_EQ(sgd->describe(), "SGD(lr=0.5, momentum=0.9, wd=0.0001)");
  EXPECT_EQ(sgd->clip_gradient(), 2.0);
  OptimizerPtr adam = make_optimizer("adam", 0.001, {.beta2 = 0.99});
  EXPECT_EQ(adam->describe(), "Adam(lr=0.001, beta1=0.9, beta2=0.99, epsilon=1e-08, wd=0)");
  EXPECT_THAT(error_of<ValueError>([] { make_optimizer("rmsprop", 0.1); }),
              HasSubstr("make_optimizer: unknown optimizer 'rmsprop', expected one of: sgd, adam"));
}

TEST(Optimizer, BadHyperparametersAreValueErrors) {
  EXPECT_THAT(error_of<ValueError>([] { SGD(0.1, 1.0); }),
              HasSubstr("SGD: momentum is 1, expected a value in [0, 1)"));
  EXPECT_THAT(error_of<ValueError>([] { SGD(-1.0); }),
              HasSubstr("optimizer: learning rate is -1, expected a value >= 0"));
  EXPECT_THAT(error_of<ValueError>([] { Adam(0.1, 0.9, 1.5); }),
              HasSubstr("Adam: beta2 is 1.5, expected a value in [0, 1)"));
  SGD sgd(0.1);
  EXPECT_THAT(error_of<ValueError>([&] { sgd.update(0, zeros({2}), NDArray()); }),
              HasSubstr("sgd: update of parameter 0: the gradient is undefined"));
  // The update operator names itself and the mismatch.
  EXPECT_THAT(error_of<ShapeError>([&] { sgd.update(0, zeros({2}), zeros({3})); }),
              HasSubstr("sgd_update: grad has shape [3] but weight has shape [2]"));
}

}  // namespace
}  // namespace janus::optim
