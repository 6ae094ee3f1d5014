// Tests of the optimizer update operators (the conformance runner compares outputs, and these
// operators have none): hand-computed steps, updates in place without allocation and in engine
// order, and user errors that name the operator and the input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "janus/base/error.h"
#include "janus/core/allocator.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

std::vector<double> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// The step the operators are documented to take, in double.
double prepared(double grad, double w, double wd, double rescale, double clip) {
  double g = rescale * grad;
  if (clip > 0) g = std::min(std::max(g, -clip), clip);
  return g + wd * w;
}

TEST(OpSgdUpdate, MatchesHandComputedSteps) {
  const NDArray w = from_vector<float>({1, -2, 3, 0.5}, {4});
  const NDArray g = from_vector<float>({0.5, 1, -4, 2}, {4});
  sgd_update(w, g, /*lr=*/0.1);
  // w - 0.1 g
  EXPECT_THAT(
      to_vector<float>(w),
      ::testing::Pointwise(::testing::FloatEq(), std::vector<float>{0.95f, -2.1f, 3.4f, 0.3f}));
  const NDArray w2 = from_vector<double>({1, -2, 3, 0.5}, {4});
  const NDArray g2 = from_vector<double>({0.5, 1, -4, 2}, {4});
  sgd_update(w2, g2, /*lr=*/0.1, /*wd=*/0.01, /*rescale_grad=*/0.5, /*clip_gradient=*/0.75);
  // g = clip(0.5 grad, 0.75) + 0.01 w = [0.26, 0.48, -0.72, 0.755]
  const std::vector<double> got = to_vector<double>(w2);
  const std::vector<double> want = {1 - 0.026, -2 - 0.048, 3 + 0.072, 0.5 - 0.0755};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-15) << i;
}

TEST(OpSgdUpdate, LargeArraysMatchTheReferenceInBothDTypes) {
  const size_t n = 100003;  // above the parallel grain, not a multiple of the vector width
  const std::vector<double> w0 = random_values(n, 1), g0 = random_values(n, 2);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const NDArray w = from_vector<double>(w0, {static_cast<int64_t>(n)}, dt);
    const NDArray g = from_vector<double>(g0, {static_cast<int64_t>(n)}, dt);
    sgd_update(w, g, 0.05, 1e-3, 0.25, 0.3);
    const std::vector<double> got = to_vector<double>(w);
    const double tol = dt == DType::kFloat32 ? 1e-6 : 1e-14;
    for (size_t i = 0; i < n; ++i) {
      const double want = w0[i] - 0.05 * prepared(g0[i], w0[i], 1e-3, 0.25, 0.3);
      ASSERT_NEAR(got[i], want, tol) << "element " << i << " of " << dtype_name(dt);
    }
  }
}

TEST(OpSgdUpdate, UpdatesInPlaceWithoutAllocatingAndAfterPendingReads) {
  const NDArray w = from_vector<float>(std::vector<float>(1000, 1.0f), {1000});
  const NDArray g = from_vector<float>(std::vector<float>(1000, 2.0f), {1000});
  const NDArray before = w * 3.0;  // pushed before the update: must see the old weight
  sgd_update(w, g, 0.25);
  EXPECT_EQ(to_vector<float>(before), std::vector<float>(1000, 3.0f));
  EXPECT_EQ(to_vector<float>(w), std::vector<float>(1000, 0.5f));
  wait_all();
  void* const data = w.raw_data();
  const MemoryStats s0 = memory_stats(cpu());
  sgd_update(w, g, 0.25);
  wait_all();
  const MemoryStats s1 = memory_stats(cpu());
  EXPECT_EQ(s1.num_allocs, s0.num_allocs);
  EXPECT_EQ(w.raw_data(), data);
  EXPECT_EQ(to_vector<float>(w), std::vector<float>(1000, 0.0f));
  // A read pushed after the update sees the new weight, without any explicit wait.
  sgd_update(w, g, 0.5);
  EXPECT_EQ(to_vector<float>(w + 0.0), std::vector<float>(1000, -1.0f));
}

TEST(OpSgdMomUpdate, MatchesHandComputedSteps) {
  const NDArray w = from_vector<double>({1, -1}, {2});
  const NDArray g = from_vector<double>({2, -4}, {2});
  const NDArray mom = zeros({2}, DType::kFloat64);
  sgd_mom_update(w, g, mom, /*lr=*/0.1, /*momentum=*/0.9);
  // mom = -0.1 g = [-0.2, 0.4]; w = [0.8, -0.6]
  EXPECT_EQ(to_vector<double>(mom), (std::vector<double>{-0.2, 0.4}));
  EXPECT_EQ(to_vector<double>(w), (std::vector<double>{0.8, -0.6}));
  sgd_mom_update(w, g, mom, 0.1, 0.9);
  // mom = 0.9 mom - 0.1 g = [-0.38, 0.76]; w = [0.42, 0.16]
  const std::vector<double> m = to_vector<double>(mom), ww = to_vector<double>(w);
  EXPECT_NEAR(m[0], -0.38, 1e-15);
  EXPECT_NEAR(m[1], 0.76, 1e-15);
  EXPECT_NEAR(ww[0], 0.42, 1e-15);
  EXPECT_NEAR(ww[1], 0.16, 1e-15);
}

TEST(OpSgdMomUpdate, LargeArraysMatchTheReferenceWithDecayAndClipping) {
  const size_t n = 70001;
  const std::vector<double> w0 = random_values(n, 3), g0 = random_values(n, 4),
                            m0 = random_values(n, 5);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const Shape s{static_cast<int64_t>(n)};
    const NDArray w = from_vector<double>(w0, s, dt), g = from_vector<double>(g0, s, dt),
                  mom = from_vector<double>(m0, s, dt);
    sgd_mom_update(w, g, mom, 0.1, 0.8, 0.01, 2.0, 1.0);
    const std::vector<double> gw = to_vector<double>(w), gm = to_vector<double>(mom);
    const double tol = dt == DType::kFloat32 ? 1e-6 : 1e-14;
    for (size_t i = 0; i < n; ++i) {
      const double m = 0.8 * m0[i] - 0.1 * prepared(g0[i], w0[i], 0.01, 2.0, 1.0);
      ASSERT_NEAR(gm[i], m, tol) << "mom element " << i << " of " << dtype_name(dt);
      ASSERT_NEAR(gw[i], w0[i] + m, tol) << "weight element " << i << " of " << dtype_name(dt);
    }
  }
}

// Two Adam steps of a scalar, by hand: g = 0.5 both times, lr 0.01, betas 0.9 / 0.999.
TEST(OpAdamUpdate, MatchesHandComputedStepsWithBiasCorrection) {
  const NDArray w = from_vector<double>({1.0}, {1});
  const NDArray g = from_vector<double>({0.5}, {1});
  const NDArray mean = zeros({1}, DType::kFloat64), var = zeros({1}, DType::kFloat64);
  adam_update(w, g, mean, var, 0.01, 0.9, 0.999, 1e-8, 0, 1, -1, /*t=*/1);
  // m = 0.05, v = 0.00025; m_hat = 0.5, v_hat = 0.25: the first step is lr * 0.5 / (0.5 + eps).
  EXPECT_NEAR(item<double>(mean), 0.05, 1e-16);
  EXPECT_NEAR(item<double>(var), 0.00025, 1e-18);
  EXPECT_NEAR(item<double>(w), 1.0 - 0.01 * 0.5 / (0.5 + 1e-8), 1e-15);
  adam_update(w, g, mean, var, 0.01, 0.9, 0.999, 1e-8, 0, 1, -1, /*t=*/2);
  // m = 0.095, v = 0.00049975; m_hat = 0.095 / 0.19 = 0.5, v_hat = 0.00049975 / 0.001999 = 0.25.
  EXPECT_NEAR(item<double>(mean), 0.095, 1e-16);
  EXPECT_NEAR(item<double>(var), 0.00049975, 1e-18);
  EXPECT_NEAR(item<double>(w), 1.0 - 2 * 0.01 * 0.5 / (0.5 + 1e-8), 1e-14);
}

TEST(OpAdamUpdate, StepZeroSkipsTheBiasCorrection) {
  const NDArray w = from_vector<float>({1.0f}, {1});
  const NDArray g = from_vector<float>({0.5f}, {1});
  const NDArray mean = zeros({1}), var = zeros({1});
  adam_update(w, g, mean, var, 0.01, 0.9, 0.999, 1e-8, 0, 1, -1, /*t=*/0);
  // m = 0.05, v = 0.00025: w -= 0.01 * 0.05 / sqrt(0.00025)
  EXPECT_NEAR(item<float>(w), 1.0 - 0.01 * 0.05 / std::sqrt(0.00025), 1e-6);
}

TEST(OpAdamUpdate, LargeArraysMatchTheReferenceWithDecayAndClipping) {
  const size_t n = 50001;
  const std::vector<double> w0 = random_values(n, 6), g0 = random_values(n, 7),
                            m0 = random_values(n, 8);
  std::vector<double> v0 = random_values(n, 9);
  for (double& v : v0) v = std::fabs(v);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const Shape s{static_cast<int64_t>(n)};
    const NDArray w = from_vector<double>(w0, s, dt), g = from_vector<double>(g0, s, dt),
                  mean = from_vector<double>(m0, s, dt), var = from_vector<double>(v0, s, dt);
    adam_update(w, g, mean, var, 0.001, 0.8, 0.99, 1e-6, 0.1, 0.5, 0.6, /*t=*/3);
    const std::vector<double> gw = to_vector<double>(w), gm = to_vector<double>(mean),
                              gv = to_vector<double>(var);
    const double tol = dt == DType::kFloat32 ? 2e-6 : 1e-13;
    const double c1 = 1 - std::pow(0.8, 3), c2 = 1 - std::pow(0.99, 3);
    for (size_t i = 0; i < n; ++i) {
      const double gi = prepared(g0[i], w0[i], 0.1, 0.5, 0.6);
      const double m = 0.8 * m0[i] + 0.2 * gi, v = 0.99 * v0[i] + 0.01 * gi * gi;
      ASSERT_NEAR(gm[i], m, tol) << "mean element " << i << " of " << dtype_name(dt);
      ASSERT_NEAR(gv[i], v, tol) << "var element " << i << " of " << dtype_name(dt);
      const double want = w0[i] - 0.001 * (m / c1) / (std::sqrt(v / c2) + 1e-6);
      ASSERT_NEAR(gw[i], want, tol) << "weight element " << i << " of " << dtype_name(dt);
    }
  }
}

// The update loops are compiled per instruction set (simd_loop.h): the copy this CPU runs
// (vector body and scalar remainder alike) must round every element as the operators'
// formulas do in float, one operation at a time: bitwise equal to this loop.
TEST(OpUpdate, Float32StepsAreBitwiseTheScalarFormulas) {
  const size_t n = 4099;  // vector bodies of every width, then a remainder
  std::vector<float> w0(n), g0(n), m0(n), v0(n);
  const std::vector<double> a = random_values(n, 10), b = random_values(n, 11),
                            c = random_values(n, 12), d = random_values(n, 13);
  for (size_t i = 0; i < n; ++i) {
    w0[i] = static_cast<float>(a[i]);
    g0[i] = static_cast<float>(b[i]);
    m0[i] = static_cast<float>(c[i]);
    v0[i] = static_cast<float>(std::fabs(d[i]));
  }
  const Shape s{static_cast<int64_t>(n)};
  const float lr = 0.05f, wd = 1e-3f, rescale = 0.25f, clip = 0.3f, mu = 0.9f;
  auto prep = [&](float g, float w) {
    return std::min(std::max(rescale * g, -clip), clip) + wd * w;
  };

  const NDArray w1 = from_vector<float>(w0, s), g = from_vector<float>(g0, s);
  sgd_update(w1, g, lr, wd, rescale, clip);
  const std::vector<float> got1 = to_vector<float>(w1);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got1[i], w0[i] - lr * prep(g0[i], w0[i])) << i;

  const NDArray w2 = from_vector<float>(w0, s), mom = from_vector<float>(m0, s);
  sgd_mom_update(w2, g, mom, lr, mu, wd, rescale, clip);
  const std::vector<float> got2 = to_vector<float>(w2), gotm = to_vector<float>(mom);
  for (size_t i = 0; i < n; ++i) {
    const float m = mu * m0[i] - lr * prep(g0[i], w0[i]);
    ASSERT_EQ(gotm[i], m) << i;
    ASSERT_EQ(got2[i], w0[i] + m) << i;
  }

  const NDArray w3 = from_vector<float>(w0, s), mean = from_vector<float>(m0, s),
                var = from_vector<float>(v0, s);
  adam_update(w3, g, mean, var, lr, 0.8, 0.99, 1e-6, wd, rescale, clip, /*t=*/0);
  const std::vector<float> got3 = to_vector<float>(w3), gotv = to_vector<float>(var);
  const float b1 = 0.8f, b2 = 0.99f, one_b1 = static_cast<float>(1.0 - 0.8),
              one_b2 = static_cast<float>(1.0 - 0.99), eps = 1e-6f;
  for (size_t i = 0; i < n; ++i) {
    const float gi = prep(g0[i], w0[i]);
    const float m = b1 * m0[i] + one_b1 * gi;
    const float v = b2 * v0[i] + one_b2 * gi * gi;
    ASSERT_EQ(gotv[i], v) << i;
    ASSERT_EQ(got3[i], w0[i] - lr * m / (std::sqrt(v * 1.0f) + eps)) << i;
  }
}

TEST(OpUpdate, ClippingKeepsNaN) {
  const NDArray w = from_vector<float>({1, 1}, {2});
  const NDArray g = from_vector<float>({NAN, 100}, {2});
  sgd_update(w, g, 1.0, 0, 1, /*clip_gradient=*/1.0);
  const std::vector<float> got = to_vector<float>(w);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 0.0f);
}

TEST(OpUpdate, ErrorsNameTheOperatorAndTheInput) {
  const NDArray w = zeros({4});
  std::string msg = error_of<ShapeError>([&] { sgd_update(w, zeros({2, 2}), 0.1); });
  EXPECT_THAT(msg, HasSubstr("sgd_update: grad has shape [2, 2] but weight has shape [4], "
                             "expected the same shape"));
  msg = error_of<ShapeError>([&] { sgd_mom_update(w, zeros({4}), zeros({3}), 0.1, 0.9); });
  EXPECT_THAT(msg, HasSubstr("sgd_mom_update: mom has shape [3] but weight has shape [4]"));
  msg = error_of<TypeError>(
      [&] { adam_update(w, zeros({4}), zeros({4}), zeros({4}, DType::kFloat64), 0.1); });
  EXPECT_THAT(msg, HasSubstr("adam_update: var is float64 but weight is float32, expected the "
                             "same dtype"));
  msg = error_of<TypeError>(
      [&] { sgd_update(zeros({4}, DType::kInt32), zeros({4}, DType::kInt32), 0.1); });
  EXPECT_THAT(msg, HasSubstr("sgd_update: weight is int32, expected float32 or float64"));
  msg = error_of<ValueError>([&] { sgd_mom_update(w, w, zeros({4}), 0.1, 1.5); });
  EXPECT_THAT(msg, HasSubstr("sgd_mom_update: momentum is 1.5, expected a value in [0, 1)"));
  msg = error_of<ValueError>([&] { sgd_update(w, w, -0.1); });
  EXPECT_THAT(msg, HasSubstr("sgd_update: lr is -0.1, expected a value >= 0"));
  msg = error_of<ValueError>([&] { adam_update(w, w, zeros({4}), zeros({4}), 0.1, 1.0); });
  EXPECT_THAT(msg, HasSubstr("adam_update: beta1 is 1, expected a value in [0, 1)"));
  msg = error_of<ValueError>(
      [&] { adam_update(w, w, zeros({4}), zeros({4}), 0.1, 0.9, 0.999, 1e-8, 0, 1, -1, -2); });
  EXPECT_THAT(msg, HasSubstr("adam_update: t is -2, expected the step number (>= 1), or 0"));
  // The failed calls pushed nothing: the weight is untouched.
  EXPECT_EQ(to_vector<float>(w), std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace janus
