// Tests of the rejection samplers random_gamma and random_poisson: the same seed gives the same
// draws, sample means and variances within 6 standard errors of the distribution's (fixed
// seeds, so stable), and NaN for parameters outside the distribution's domain.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/test_util.h"

namespace janus {
namespace {

NDArray sample(const std::string& op, double param, int64_t n, DType dtype = DType::kFloat64) {
  return ops::invoke(ops::get_op(op), {full({n}, param, dtype)}, {})[0];
}

struct Moments {
  double mean = 0;
  double var = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

// The standard error of a sample mean is sqrt(var / n); that of a sample variance is
// sqrt((mu4 - var^2) / n), with mu4 the fourth central moment.
void expect_moments(const std::vector<double>& v, double mean, double var, double mu4) {
  const double n = static_cast<double>(v.size());
  const Moments m = moments(v);
  EXPECT_NEAR(m.mean, mean, 6 * std::sqrt(var / n));
  EXPECT_NEAR(m.var, var, 6 * std::sqrt((mu4 - var * var) / n));
}

TEST(RandomGamma, SameSeedSameDraws) {
  seed(11);
  const std::vector<double> a = to_vector<double>(sample("random_gamma", 0.5, 1000));
  seed(11);
  const std::vector<double> b = to_vector<double>(sample("random_gamma", 0.5, 1000));
  EXPECT_EQ(a, b);
  const std::vector<double> c = to_vector<double>(sample("random_gamma", 0.5, 1000));
  EXPECT_NE(a, c);
}

TEST(RandomGamma, MomentsOnBothSidesOfOne) {
  seed(5);
  for (double alpha : {0.3, 1.0, 2.5, 40.0}) {
    const std::vector<double> v = to_vector<double>(sample("random_gamma", alpha, 100000));
    // Gamma(a): mean a, variance a, fourth central moment 3a^2 + 6a.
    expect_moments(v, alpha, alpha, 3 * alpha * alpha + 6 * alpha);
    for (double x : v) ASSERT_GT(x, 0.0);
  }
}

TEST(RandomGamma, NanOutsideTheDomainAndFloat32) {
  seed(1);
  for (double x : to_vector<double>(sample("random_gamma", -1.0, 4))) EXPECT_TRUE(std::isnan(x));
  const std::vector<float> f = to_vector<float>(sample("random_gamma", 3.0, 1000, DType::kFloat32));
  double mean = 0;
  for (float x : f) mean += x;
  EXPECT_NEAR(mean / 1000, 3.0, 6 * std::sqrt(3.0 / 1000));
}

TEST(RandomPoisson, MomentsOnBothSidesOfTheSwitch) {
  seed(6);
  for (double lam : {0.5, 3.0, 9.9, 10.0, 250.0}) {
    const std::vector<double> v = to_vector<double>(sample("random_poisson", lam, 100000));
    // Poisson(l): mean l, variance l, fourth central moment 3l^2 + l.
    expect_moments(v, lam, lam, 3 * lam * lam + lam);
    for (double x : v) ASSERT_EQ(x, std::floor(x));
  }
  for (double x : to_vector<double>(sample("random_poisson", 0.0, 10))) EXPECT_EQ(x, 0.0);
  for (double x : to_vector<double>(sample("random_poisson", -2.0, 3))) EXPECT_TRUE(std::isnan(x));
}

TEST(RandomPoisson, SameSeedSameDraws) {
  seed(12);
  const std::vector<double> a = to_vector<double>(sample("random_poisson", 30.0, 500));
  seed(12);
  EXPECT_EQ(a, to_vector<double>(sample("random_poisson", 30.0, 500)));
}

TEST(RandomSamplers, IntegerParametersAreATypeError) {
  const NDArray ints = full({3}, 2.0, DType::kInt64);
  EXPECT_THROW(ops::invoke(ops::get_op("random_gamma"), {ints}, {}), TypeError);
  EXPECT_THROW(ops::invoke(ops::get_op("random_poisson"), {ints}, {}), TypeError);
}

}  // namespace
}  // namespace janus
