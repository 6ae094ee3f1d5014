// Losses and metrics against hand-computed values.
#include "janus/nn/loss.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "janus/engine/array.h"
#include "janus/nn/metric.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

TEST(Loss, L2AndL1PerSample) {
  const NDArray pred = from_vector<float>({1, 2, 3, 5}, {2, 2});
  const NDArray label = from_vector<float>({1, 0, 0, 5}, {2, 2});
  EXPECT_EQ(to_vector<float>(L2Loss()(pred, label)), (std::vector<float>{1.0f, 2.25f}));
  EXPECT_EQ(to_vector<float>(L1Loss()(pred, label)), (std::vector<float>{1.0f, 1.5f}));
  // A label of pred's size is reshaped, as in Gluon ([N] for [N, 1]).
  EXPECT_EQ(
      to_vector<float>(L2Loss()(reshape(pred, {4, 1}), from_vector<float>({1, 2, 3, 4}, {4}))),
      (std::vector<float>{0, 0, 0, 0.5f}));
  EXPECT_THAT(error_of<ShapeError>([&] { L2Loss()(pred, zeros({3})); }),
              HasSubstr("L2Loss: label of shape [3] does not match prediction of shape [2, 2]"));
}

TEST(Loss, SoftmaxCrossEntropyAndSigmoidBinaryCrossEntropy) {
  const NDArray logits = from_vector<double>({0, 0, 0, 1, 2, 3}, {2, 3});
  const NDArray labels = from_vector<int32_t>({1, 2}, {2});
  const std::vector<double> ce = to_vector<double>(SoftmaxCrossEntropyLoss()(logits, labels));
  EXPECT_NEAR(ce[0], std::log(3.0), 1e-12);
  EXPECT_NEAR(ce[1], std::log(std::exp(1) + std::exp(2) + std::exp(3)) - 3, 1e-12);
  const NDArray x = from_vector<double>({-100, 0, 100}, {3, 1});
  const NDArray z = from_vector<double>({0, 1, 1}, {3, 1});
  const std::vector<double> bce = to_vector<double>(SigmoidBinaryCrossEntropyLoss()(x, z));
  EXPECT_NEAR(bce[0], 0.0, 1e-12);  // no overflow for large logits
  EXPECT_NEAR(bce[1], std::log(2.0), 1e-12);
  EXPECT_NEAR(bce[2], 0.0, 1e-12);
  const NDArray p = from_vector<double>({0.5, 0.9}, {2, 1});
  const std::vector<double> bce_p = to_vector<double>(
      SigmoidBinaryCrossEntropyLoss(true)(p, from_vector<double>({1, 0}, {2, 1})));
  EXPECT_NEAR(bce_p[0], std::log(2.0), 1e-9);
  EXPECT_NEAR(bce_p[1], -std::log(0.1), 1e-9);
}

TEST(Metric, AccuracyAndMeanLossAccumulate) {
  Accuracy acc;
  EXPECT_TRUE(std::isnan(acc.get()));
  acc.update(from_vector<int32_t>({0, 1}, {2}),
             from_vector<float>({0.9f, 0.1f, 0.8f, 0.2f}, {2, 2}));
  acc.update(from_vector<int32_t>({1}, {1}), from_vector<float>({0.3f, 0.7f}, {1, 2}));
  EXPECT_DOUBLE_EQ(acc.get(), 2.0 / 3.0);
  EXPECT_THAT(error_of<ShapeError>([&] {
                acc.update(zeros({3}), zeros({2, 2}));
              }),
              HasSubstr("Accuracy: 3 labels (shape [3]) for predictions of shape [2, 2]"));
  MeanLoss ml;
  ml.update(from_vector<float>({1, 2}, {2}));
  ml.update(from_vector<float>({6}, {1}));
  EXPECT_DOUBLE_EQ(ml.get(), 3.0);
  ml.reset();
  EXPECT_EQ(ml.count(), 0);
}

// The fused metric gives a MeanLoss's and an Accuracy's figures from the same arrays: ties and a
// NaN row take argmax's index (the first largest, the first NaN), labels of any numeric dtype
// compare as int64, and scores on another device than cpu(0) or of another dtype (float16:
// the operations' path) count the same.
TEST(Metric, LossAndAccuracyEqualsMeanLossAndAccuracy) {
  const ScopedCpuDevices devices(2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const NDArray pred = from_vector<float>({0.5f, 0.5f, 0.1f,   // tie: class 0
                                           0.2f, nan, 0.9f,    // NaN: class 1
                                           0.1f, 0.2f, 0.7f,   // class 2
                                           0.3f, 0.3f, 0.3f},  // tie: class 0
                                          {4, 3});
  const NDArray loss = from_vector<float>({0.25f, 1.5f, 3.0f, 0.125f}, {4});
  for (const NDArray& label :
       {from_vector<float>({0, 1, 1, 0}, {4}), from_vector<int32_t>({0, 1, 1, 0}, {4}),
        from_vector<int64_t>({0, 1, 1, 0}, {4})}) {
    for (Device d : {cpu(0), cpu(1)}) {
      for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
        SCOPED_TRACE(fmt::format("label {} on {}, scores {}", label.dtype(), d, dtype));
        const NDArray p = copyto(cast(pred, dtype), d), y = copyto(label, d);
        const NDArray l = copyto(loss, d);
        LossAndAccuracy fused;
        Accuracy acc;
        MeanLoss mean;
        for (int step = 0; step < 2; ++step) {
          fused.update(y, p, l);
          acc.update(y, p);
          mean.update(l);
        }
        EXPECT_EQ(fused.count(), 8);
        EXPECT_EQ(fused.accuracy(), acc.get());
        EXPECT_EQ(fused.accuracy(), 0.75);  // rows 0, 1, 3 right; row 2 says 2, not 1
        EXPECT_EQ(fused.mean_loss(), mean.get());
      }
    }
  }
  LossAndAccuracy m;
  EXPECT_TRUE(std::isnan(m.accuracy()));
  EXPECT_TRUE(std::isnan(m.mean_loss()));
  EXPECT_THAT(error_of<ShapeError>([&] {
                m.update(zeros({3}), zeros({2, 2}), zeros({3}));
              }),
              HasSubstr("LossAndAccuracy: 3 labels (shape [3]) and 3 losses (shape [3]) for "
                        "scores of shape [2, 2], expected scores [batch, classes]"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                m.update(zeros({2}), zeros({2, 2}), zeros({1}));
              }),
              HasSubstr("and 1 losses (shape [1])"));
  m.update(from_vector<int32_t>({1}, {1}), from_vector<float>({0.3f, 0.7f}, {1, 2}),
           from_vector<float>({2}, {1}));
  m.reset();
  EXPECT_EQ(m.count(), 0);
}

}  // namespace
}  // namespace janus::nn
