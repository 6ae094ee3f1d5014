// Tests of random_uniform and random_normal: the Philox generator against Random123's known
// answers, exact values against a reference, determinism under every engine, ranges,
// moments and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "random/normal_float.h"
#include "random/philox.h"
#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

struct Moments {
  double mean, stddev, min, max;
};
Moments moments(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / static_cast<double>(v.size())),
          *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

// ---- the generator ------------------------------------------------------------------------

// Random123's kat_vectors for philox4x32-10: counter (c0..c3), key (k0, k1). Our block(b) uses
// counter {lo(b), hi(b), lo(call), hi(call)} and key {lo(seed), hi(seed)}.
TEST(OpRandomPhilox, MatchesRandom123KnownAnswers) {
  struct Kat {
    uint32_t c[4];
    uint32_t k[2];
    std::array<uint32_t, 4> out;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& kat : kats) {
    const ops::RngKey key{uint64_t{kat.k[1]} << 32 | kat.k[0], uint64_t{kat.c[3]} << 32 | kat.c[2]};
    const ops::Philox gen(key);
    EXPECT_EQ(gen.block(uint64_t{kat.c[1]} << 32 | kat.c[0]), kat.out) << std::hex << kat.c[0];
  }
}

TEST(OpRandomPhilox, UniformMapsWordsIntoHalfOpenUnitInterval) {
  EXPECT_EQ(ops::uniform01(0), 0.0);
  EXPECT_EQ(ops::uniform01(0xffffffffu), 1.0 - std::ldexp(1.0, -24));
  EXPECT_EQ(ops::uniform01(0x80000000u), 0.5);
  EXPECT_EQ(ops::uniform01(0xffu), 0.0);  // the low 8 bits are dropped
}

// ---- exact values -------------------------------------------------------------------------

TEST(OpRandomUniform, MatchesPhiloxReferenceExactly) {
  seed(123);
  NDArray first = random_uniform(-1.0, 3.0, {37}, DType::kFloat64);
  NDArray second = random_uniform(0.0, 1.0, {5, 3}, DType::kFloat64);
  const std::vector<double> a = to_vector<double>(first);
  const std::vector<double> b = to_vector<double>(second);
  const ops::Philox g0(ops::RngKey{123, 0}), g1(ops::RngKey{123, 1});
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], -1.0 + 4.0 * ops::uniform01(g0.word(i))) << "element " << i;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b[i], ops::uniform01(g1.word(i))) << "element " << i;
  }
}

TEST(OpRandomNormal, MatchesBoxMullerReference) {
  seed(99);
  const std::vector<double> v = to_vector<double>(random_normal(1.5, 0.5, {11}, DType::kFloat64));
  const ops::Philox gen(ops::RngKey{99, 0});
  for (size_t i = 0; i < v.size(); ++i) {
    const auto w = gen.block(i / 2);
    const double u1 = 1.0 - ops::uniform01(w[0]);
    const double u2 = ops::uniform01(w[1]);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    const double z = i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
    EXPECT_NEAR(v[i], 1.5 + 0.5 * z, 1e-12) << "element " << i;
  }
}

// float32 (and the 16-bit types) take four elements per block in single precision, with the
// logarithm, sine and cosine as polynomials: within 1e-6 of the transform in double, and the
// element order of the stream (words 0, 1 give elements 4j, 4j+1; words 2, 3 give 4j+2, 4j+3)
// is the one documented in normal_float.h. 4099 elements: full chunks, threads and a partial
// last block.
TEST(OpRandomNormal, Float32MatchesBoxMullerInDoubleClosely) {
  seed(5);
  const std::vector<float> v = to_vector<float>(random_normal(0.0, 1.0, {4099}, DType::kFloat32));
  const ops::Philox gen(ops::RngKey{5, 0});
  double worst = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto w = gen.block(i / 4);
    const bool second = i % 4 >= 2;
    const double u1 = 1.0 - ops::uniform01(w[second ? 2 : 0]);
    const double u2 = ops::uniform01(w[second ? 3 : 1]);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    const double z = i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
    worst = std::max(worst, std::fabs(v[i] - z));
    ASSERT_NEAR(v[i], z, 2e-6) << "element " << i;
  }
  EXPECT_GT(worst, 0.0);  // single precision: not the double values rounded by accident
  // loc and scale, and the 16-bit types round the same samples.
  seed(5);
  const std::vector<float> shifted =
      to_vector<float>(random_normal(2.0, 0.5, {4099}, DType::kFloat32));
  seed(5);
  const std::vector<double> half =
      to_vector<double>(random_normal(0.0, 1.0, {4099}, DType::kBFloat16));
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_FLOAT_EQ(shifted[i], 2.0f + 0.5f * v[i]) << "element " << i;
    ASSERT_NEAR(half[i], v[i], std::fabs(v[i]) / 128 + 1e-6) << "element " << i;
  }
}

// Extremes of the transform: the largest radius (u1 at its smallest, 2^-24) and the four
// quarter turns of the angle, where the polynomials swap and change sign.
TEST(OpRandomNormal, Float32TransformAtItsExtremes) {
  const double max_r = std::sqrt(-2.0 * std::log(std::ldexp(1.0, -24)));
  EXPECT_NEAR(ops::normal_detail::radius(0xffffffffu), max_r, 1e-5);
  EXPECT_EQ(ops::normal_detail::radius(0u), 0.0f);  // u1 = 1
  EXPECT_NEAR(ops::normal_detail::radius(0x80000000u), std::sqrt(2.0 * std::log(2.0)), 1e-6);
  for (uint32_t k = 0; k < (1u << 24); k += (1u << 24) / 64 + 12345) {
    float c = 0, s = 0;
    ops::normal_detail::unit_circle(k << 8, c, s);
    const double theta = 2.0 * std::numbers::pi * std::ldexp(static_cast<double>(k), -24);
    ASSERT_NEAR(c, std::cos(theta), 1e-6) << "k " << k;
    ASSERT_NEAR(s, std::sin(theta), 1e-6) << "k " << k;
  }
  float c = 0, s = 0;
  ops::normal_detail::unit_circle(0xffffff00u, c, s);  // just below a full turn
  EXPECT_NEAR(c, 1.0, 1e-6);
  EXPECT_LT(s, 0.0f);
}

// ---- determinism ----------------------------------------------------------------------------

// A fixed program of random calls; returns every value drawn.
std::vector<double> draw_program(uint64_t s) {
  seed(s);
  NDArray u = random_uniform(-2.0, 5.0, {100000});  // large: split among intra-op threads
  NDArray n = random_normal(0.0, 1.0, {3, 7});
  NDArray d = random_uniform(0.0, 1.0, {1001}, DType::kFloat64);
  NDArray h = random_normal(2.0, 3.0, {77}, DType::kFloat16);
  NDArray big = random_normal(0.0, 1.0, {70001}, DType::kFloat64);
  std::vector<double> out;
  for (const NDArray& a : {u, n, d, h, big}) {
    const std::vector<double> v = to_vector<double>(a);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

TEST(OpRandom, SameSeedGivesSameValues) {
  const std::vector<double> a = draw_program(42);
  const std::vector<double> b = draw_program(42);
  EXPECT_EQ(a, b);
}

TEST(OpRandom, DifferentSeedsGiveDifferentValues) {
  const std::vector<double> a = draw_program(42);
  const std::vector<double> b = draw_program(43);
  ASSERT_EQ(a.size(), b.size());
  size_t equal = 0;
  for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
  EXPECT_LT(equal, a.size() / 100);
}

TEST(OpRandom, SuccessiveCallsDrawDifferentValues) {
  seed(42);
  const std::vector<float> a = to_vector<float>(random_uniform(0.0, 1.0, {1000}));
  const std::vector<float> b = to_vector<float>(random_uniform(0.0, 1.0, {1000}));
  EXPECT_NE(a, b);
  seed(42);
  EXPECT_EQ(to_vector<float>(random_uniform(0.0, 1.0, {1000})), a);  // seed resets the counter
}

TEST(OpRandom, ValuesDependOnlyOnElementIndexNotShape) {
  seed(5);
  const std::vector<float> flat = to_vector<float>(random_uniform(0.0, 1.0, {1000}));
  seed(5);
  const std::vector<float> grid = to_vector<float>(random_uniform(0.0, 1.0, {8, 125}));
  EXPECT_EQ(flat, grid);
  seed(5);
  const std::vector<float> prefix = to_vector<float>(random_uniform(0.0, 1.0, {10}));
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), flat.begin()));
}

TEST(OpRandom, SameValuesUnderNaiveAndThreadedEngines) {
  const std::vector<double> reference = draw_program(2024);
  {
    ScopedEngine naive(EngineKind::kNaive, engine_options_from_env());
    EXPECT_EQ(draw_program(2024), reference) << "naive engine";
  }
  {
    EngineOptions two;
    two.cpu_compute_workers = 2;  // kernels of one device run concurrently
    ScopedEngine threaded(EngineKind::kThreaded, two);
    EXPECT_EQ(draw_program(2024), reference) << "threaded engine, 2 compute workers";
  }
  {
    ScopedEngine threaded(EngineKind::kThreaded, engine_options_from_env());
    EXPECT_EQ(draw_program(2024), reference) << "threaded engine";
  }
}

// ---- ranges and moments -----------------------------------------------------------------------

TEST(OpRandomUniform, ValuesLieInHalfOpenRange) {
  seed(7);
  struct Case {
    double low, high;
    DType dtype;
  };
  for (const Case& c : {Case{0.0, 1.0, DType::kFloat32}, Case{-3.0, 5.0, DType::kFloat32},
                        Case{-3.0, 5.0, DType::kFloat64}, Case{10.0, 10.5, DType::kFloat64},
                        Case{-1e-3, 1e-3, DType::kFloat64}}) {
    SCOPED_TRACE(fmt::format("[{}, {}) {}", c.low, c.high, c.dtype));
    NDArray a = random_uniform(c.low, c.high, {100000}, c.dtype);
    EXPECT_EQ(a.shape(), (Shape{100000}));
    EXPECT_EQ(a.dtype(), c.dtype);
    const Moments m = moments(to_vector<double>(a));
    const double width = c.high - c.low;
    EXPECT_GE(m.min, c.low);
    EXPECT_LT(m.max, c.high);
    EXPECT_LT(m.min, c.low + 1e-3 * width);  // the whole range is used
    EXPECT_GT(m.max, c.high - 1e-3 * width);
    EXPECT_NEAR(m.mean, (c.low + c.high) / 2, 0.01 * width);
    EXPECT_NEAR(m.stddev, width / std::sqrt(12.0), 0.01 * width);
  }
}

TEST(OpRandomUniform, EmptyRangeGivesLow) {
  const std::vector<float> v = to_vector<float>(random_uniform(2.5, 2.5, {100}));
  for (float x : v) EXPECT_EQ(x, 2.5f);
}

TEST(OpRandomUniform, ShapesDTypesAndDefaults) {
  seed(1);
  EXPECT_EQ(random_uniform(0, 1, {}).size(), 1);
  EXPECT_EQ(random_uniform(0, 1, {0, 4}).size(), 0);
  EXPECT_TRUE(to_vector<float>(random_uniform(0, 1, {0, 4})).empty());
  NDArray d = random_uniform(0, 1, {2, 3});
  EXPECT_EQ(d.dtype(), DType::kFloat32);
  EXPECT_EQ(d.device(), cpu(0));
}

// 16-bit floats are coarse: low + (high - low) * u often rounds up to high (about 1 in 4096
// draws for float16 in [0, 1)); the result must still lie in [low, high).
TEST(OpRandomUniform, SixteenBitFloatsStayBelowHigh) {
  seed(3);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (double low : {0.0, -4.0}) {
      SCOPED_TRACE(fmt::format("[{}, 1) {}", low, dt));
      const Moments m = moments(to_vector<double>(random_uniform(low, 1.0, {100000}, dt)));
      EXPECT_GE(m.min, low);
      EXPECT_LT(m.max, 1.0);
      EXPECT_NEAR(m.mean, (low + 1.0) / 2, 0.01 * (1.0 - low));
    }
  }
}

TEST(OpRandomNormal, SampleMomentsMatchLocAndScale) {
  seed(11);
  struct Case {
    double loc, scale;
    DType dtype;
  };
  for (const Case& c : {Case{0.0, 1.0, DType::kFloat32}, Case{3.0, 2.0, DType::kFloat64},
                        Case{-5.0, 0.1, DType::kFloat32}}) {
    SCOPED_TRACE(fmt::format("loc {} scale {} {}", c.loc, c.scale, c.dtype));
    const std::vector<double> v =
        to_vector<double>(random_normal(c.loc, c.scale, {100001}, c.dtype));
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, c.loc, 0.02 * c.scale);
    EXPECT_NEAR(m.stddev, c.scale, 0.02 * c.scale);
    // Tails are there but not absurd.
    EXPECT_LT(m.min, c.loc - 3.5 * c.scale);
    EXPECT_GT(m.max, c.loc + 3.5 * c.scale);
    EXPECT_GT(m.min, c.loc - 7.0 * c.scale);
    EXPECT_LT(m.max, c.loc + 7.0 * c.scale);
    // About 68.3% within one standard deviation.
    const auto within =
        std::count_if(v.begin(), v.end(), [&](double x) { return std::fabs(x - c.loc) < c.scale; });
    EXPECT_NEAR(static_cast<double>(within) / static_cast<double>(v.size()), 0.6827, 0.01);
  }
}

TEST(OpRandomNormal, ZeroScaleGivesLoc) {
  const std::vector<double> v = to_vector<double>(random_normal(-1.25, 0.0, {9}, DType::kFloat64));
  for (double x : v) EXPECT_EQ(x, -1.25);
}

// ---- errors -----------------------------------------------------------------------------------

TEST(OpRandomUniform, Errors) {
  std::string msg = error_of<ValueError>([] { random_uniform(2.0, 1.0, {3}); });
  EXPECT_THAT(msg, HasSubstr("random_uniform: low 2 is above high 1, expected low <= high"));
  for (DType dt : {DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    msg = error_of<TypeError>([&] { random_uniform(0.0, 1.0, {3}, dt); });
    EXPECT_THAT(msg, HasSubstr(fmt::format("random_uniform: dtype {} is not a floating type", dt)));
  }
  msg = error_of<ShapeError>([] { random_uniform(0.0, 1.0, {2, -3}); });
  EXPECT_THAT(msg, HasSubstr("random_uniform: shape [2, -3] has a negative extent at axis 1"));
  msg = error_of<DeviceError>([] { random_uniform(0.0, 1.0, {2}, DType::kFloat32, cpu(9)); });
  EXPECT_THAT(msg, HasSubstr("random_uniform: device cpu(9) does not exist"));
}

TEST(OpRandomNormal, Errors) {
  std::string msg = error_of<ValueError>([] { random_normal(0.0, -1.0, {3}); });
  EXPECT_THAT(msg, HasSubstr("random_normal: scale is -1, expected scale >= 0"));
  msg = error_of<TypeError>([] { random_normal(0.0, 1.0, {3}, DType::kInt64); });
  EXPECT_THAT(msg, HasSubstr("random_normal: dtype int64 is not a floating type"));
  msg = error_of<ShapeError>([] { random_normal(0.0, 1.0, {-1}); });
  EXPECT_THAT(msg, HasSubstr("random_normal: shape [-1] has a negative extent at axis 0"));
}

TEST(OpRandom, FailedCallsDoNotAdvanceTheStream) {
  seed(77);
  const std::vector<float> a = to_vector<float>(random_uniform(0.0, 1.0, {50}));
  seed(77);
  EXPECT_THROW(random_uniform(1.0, 0.0, {50}), ValueError);
  EXPECT_EQ(to_vector<float>(random_uniform(0.0, 1.0, {50})), a);
}

}  // namespace
}  // namespace janus
