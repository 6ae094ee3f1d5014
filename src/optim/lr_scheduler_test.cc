// Learning-rate schedules: their values by update number, and an optimizer that follows one.
#include "janus/optim/lr_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/optim/optimizer.h"

#include "testing/test_util.h"

namespace janus::optim {
namespace {

using ::testing::HasSubstr;

TEST(LRScheduler, FactorDecaysAfterEveryStepUpdates) {
  FactorScheduler s(/*step=*/2, /*factor=*/0.5, /*stop_factor_lr=*/0.2, /*base_lr=*/1.0);
  EXPECT_EQ(s(0), 1.0);
  EXPECT_EQ(s(1), 1.0);
  EXPECT_EQ(s(2), 1.0);
  EXPECT_EQ(s(3), 0.5);
  EXPECT_EQ(s(4), 0.5);
  EXPECT_EQ(s(5), 0.25);
  EXPECT_EQ(s(7), 0.2);  // 0.125, held at stop_factor_lr
  EXPECT_THAT(error_of<ValueError>([] { FactorScheduler(0); }),
              HasSubstr("FactorScheduler: step is 0, expected at least 1"));
  EXPECT_THAT(error_of<ValueError>([] { FactorScheduler(1, 2.0); }),
              HasSubstr("FactorScheduler: factor is 2, expected a value in (0, 1]"));
}

TEST(LRScheduler, MultiFactorDecaysAtEachMilestone) {
  MultiFactorScheduler s({2, 4}, 0.1, 1.0);
  EXPECT_EQ(s(1), 1.0);
  EXPECT_EQ(s(2), 1.0);
  EXPECT_DOUBLE_EQ(s(3), 0.1);
  EXPECT_DOUBLE_EQ(s(4), 0.1);
  EXPECT_DOUBLE_EQ(s(5), 0.01);
  EXPECT_THAT(error_of<ValueError>([] {
                MultiFactorScheduler({3, 2});
              }),
              HasSubstr("MultiFactorScheduler: steps 3, 2 must be increasing"));
}

TEST(LRScheduler, CosineGoesFromBaseToFinalWithWarmup) {
  CosineScheduler s(/*max_update=*/10, /*base_lr=*/1.0, /*final_lr=*/0.0);
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_DOUBLE_EQ(s(5), 0.5);
  EXPECT_NEAR(s(10), 0.0, 1e-16);
  EXPECT_EQ(s(11), 0.0);
  CosineScheduler w(/*max_update=*/12, 1.0, 0.1, /*warmup_steps=*/2, /*warmup_begin_lr=*/0.0);
  EXPECT_DOUBLE_EQ(w(1), 0.5);
  EXPECT_DOUBLE_EQ(w(2), 1.0);
  EXPECT_DOUBLE_EQ(w(7), 0.1 + 0.9 * (1 + std::cos(std::numbers::pi / 2)) / 2);
  EXPECT_THAT(error_of<ValueError>([] { CosineScheduler(2, 1.0, 0.0, 2); }),
              HasSubstr("CosineScheduler: max_update is 2 and warmup_steps 2"));
}

TEST(LRScheduler, OptimizerFollowsTheScheduleFromItsOwnRate) {
  SGD sgd(/*learning_rate=*/1.0);
  // The optimizer's rate becomes the schedule's base_lr (as in MXNet).
  sgd.set_lr_scheduler(std::make_shared<FactorScheduler>(1, 0.5, 1e-8, /*base_lr=*/123.0));
  EXPECT_EQ(sgd.lr_scheduler()->base_lr(), 1.0);
  const NDArray w = zeros({1}), g = ones({1});
  std::vector<float> seen;
  for (int i = 0; i < 3; ++i) {
    sgd.update(0, w, g);
    seen.push_back(to_vector<float>(w)[0]);
  }
  // Steps of 1, 0.5 and 0.25.
  EXPECT_EQ(seen, (std::vector<float>{-1.0f, -1.5f, -1.75f}));
  EXPECT_EQ(sgd.num_update(), 3);
  EXPECT_EQ(sgd.learning_rate(), 0.25);
  EXPECT_THAT(error_of<ValueError>([&] { sgd.set_learning_rate(0.1); }),
              HasSubstr("sgd: set_learning_rate: the schedule FactorScheduler(step=1, factor=0.5"));
  sgd.set_lr_scheduler(nullptr);
  sgd.set_learning_rate(0.1);
  EXPECT_EQ(sgd.learning_rate(), 0.1);
}

TEST(LRScheduler, LambdaGivesTheRateDirectly) {
  SGD sgd(1.0);
  sgd.set_lr_scheduler(std::make_shared<LambdaScheduler>(
      [](int64_t n) { return 1.0 / static_cast<double>(n + 1); }));
  const NDArray w = zeros({1}), g = ones({1});
  sgd.update(0, w, g);  // lr(1) = 0.5
  sgd.update(0, w, g);  // lr(2) = 1/3
  EXPECT_FLOAT_EQ(to_vector<float>(w)[0], -(0.5f + 1.0f / 3.0f));
}

}  // namespace
}  // namespace janus::optim
