// Tests of randint and permutation: the bounded draw against a plain restatement of its rule,
// exact values, ranges, chi-square uniformity (loose bounds, fixed seeds), determinism under
// every engine, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "random/philox.h"
#include "random/uniform_int.h"
#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

// Chi-square statistic of counts against equal expected counts.
double chi_square(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (int64_t c : counts)
    chi2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return chi2;
}

// ---- the bounded draw -------------------------------------------------------------------------

// The rule of uniform_below, written plainly: candidates are the 64-bit words (w0 | w1 << 32)
// and (w2 | w3 << 32) of blocks index, index + 2^56, index + 2 * 2^56, ...; the first whose
// product with range has low 64 bits >= 2^64 mod range gives the high 64 bits.
uint64_t plain_uniform_below(const ops::Philox& gen, uint64_t index, uint64_t range) {
  const unsigned __int128 two64 = static_cast<unsigned __int128>(1) << 64;
  const uint64_t threshold = static_cast<uint64_t>(two64 % range);
  for (uint64_t a = 0;; ++a) {
    const auto w = gen.block(index + (a << 56));
    for (int h = 0; h < 2; ++h) {
      const uint64_t x = w[2 * h] | static_cast<uint64_t>(w[2 * h + 1]) << 32;
      const unsigned __int128 m = static_cast<unsigned __int128>(x) * range;
      if (static_cast<uint64_t>(m) >= threshold) return static_cast<uint64_t>(m >> 64);
    }
  }
}

TEST(OpRandomUniformBelow, FollowsItsRuleIncludingRejections) {
  const ops::Philox gen(ops::RngKey{2718, 3});
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  // 2^63 + 1 rejects almost half of the candidates; 3 * 2^62 a quarter; 2^64 - 1 almost none.
  for (uint64_t range : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{10}, uint64_t{256},
                         uint64_t{1000003}, (uint64_t{1} << 63) + 1, uint64_t{3} << 62, max}) {
    SCOPED_TRACE(range);
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint64_t v = ops::uniform_below(gen, i, range);
      ASSERT_LT(v, range);
      ASSERT_EQ(v, plain_uniform_below(gen, i, range)) << "draw " << i;
    }
  }
}

TEST(OpRandomUniformBelow, PowersOfTwoAreTheTopBitsOfTheFirstCandidate) {
  const ops::Philox gen(ops::RngKey{1, 1});
  for (int bits : {1, 8, 31, 63}) {
    for (uint64_t i = 0; i < 100; ++i) {
      const auto w = gen.block(i);
      const uint64_t x = w[0] | static_cast<uint64_t>(w[1]) << 32;
      ASSERT_EQ(ops::uniform_below(gen, i, uint64_t{1} << bits), x >> (64 - bits));
    }
  }
}

// ---- randint: values ----------------------------------------------------------------------------

TEST(OpRandint, MatchesTheStreamExactly) {
  seed(123);
  const std::vector<int64_t> a = to_vector<int64_t>(randint(-5, 17, {37}));
  const std::vector<uint8_t> b = to_vector<uint8_t>(randint(0, 256, {4, 5}, DType::kUInt8));
  const ops::Philox g0(ops::RngKey{123, 0}), g1(ops::RngKey{123, 1});
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], -5 + static_cast<int64_t>(plain_uniform_below(g0, i, 22))) << "element " << i;
  }
  for (size_t i = 0; i < b.size(); ++i) {  // 256 = 2^8: the top byte of the first candidate
    const auto w = g1.block(i);
    ASSERT_EQ(b[i], w[1] >> 24) << "element " << i;
  }
}

TEST(OpRandint, ValuesLieInRangeAndCoverIt) {
  seed(7);
  struct Case {
    int64_t low, high;
    DType dtype;
  };
  for (const Case& c : {Case{0, 2, DType::kInt64}, Case{-3, 7, DType::kInt32},
                        Case{250, 256, DType::kUInt8}, Case{0, 256, DType::kUInt8},
                        Case{-1000, 1000, DType::kInt64}, Case{41, 42, DType::kInt32}}) {
    SCOPED_TRACE(fmt::format("[{}, {}) {}", c.low, c.high, c.dtype));
    NDArray a = randint(c.low, c.high, {100000}, c.dtype);
    EXPECT_EQ(a.shape(), (Shape{100000}));
    EXPECT_EQ(a.dtype(), c.dtype);
    const std::vector<int64_t> v = to_vector<int64_t>(a);
    EXPECT_EQ(*std::min_element(v.begin(), v.end()), c.low);
    EXPECT_EQ(*std::max_element(v.begin(), v.end()), c.high - 1);
  }
}

TEST(OpRandint, ExtremeRanges) {
  seed(8);
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  const int64_t hi64 = std::numeric_limits<int64_t>::max();
  // The widest int64 range: 2^64 - 1 values; both signs show up about equally.
  std::vector<int64_t> v = to_vector<int64_t>(randint(lo64, hi64, {20000}));
  EXPECT_NEAR(std::count_if(v.begin(), v.end(), [](int64_t x) { return x < 0; }), 10000, 500);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [&](int64_t x) { return x < hi64; }));
  // [INT64_MIN, 1): 2^63 + 1 values, where almost half of the candidates are rejected.
  v = to_vector<int64_t>(randint(lo64, 1, {20000}));
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int64_t x) { return x <= 0; }));
  EXPECT_NEAR(std::count_if(v.begin(), v.end(), [](int64_t x) { return x < (int64_t{-1} << 62); }),
              10000, 500);
  // The whole int32 range.
  const std::vector<int32_t> w = to_vector<int32_t>(
      randint(std::numeric_limits<int32_t>::min(), int64_t{1} << 31, {20000}, DType::kInt32));
  EXPECT_NEAR(std::count_if(w.begin(), w.end(), [](int32_t x) { return x < 0; }), 10000, 500);
}

// Chi-square over k bins: mean k - 1, standard deviation sqrt(2 (k - 1)). The bounds are about
// eight standard deviations above the mean, and the seeds are fixed, so the test is stable.
TEST(OpRandint, CountsAreUniform) {
  seed(2025);
  {
    const std::vector<int64_t> v = to_vector<int64_t>(randint(-3, 7, {200000}));
    std::vector<int64_t> counts(10, 0);
    for (int64_t x : v) ++counts[static_cast<size_t>(x + 3)];
    EXPECT_LT(chi_square(counts), 45.0) << fmt::format("{}", fmt::join(counts, " "));
  }
  {
    const std::vector<uint8_t> v = to_vector<uint8_t>(randint(0, 256, {256 * 400}, DType::kUInt8));
    std::vector<int64_t> counts(256, 0);
    for (uint8_t x : v) ++counts[x];
    EXPECT_LT(chi_square(counts), 255.0 + 8 * 22.6);
  }
  {
    // A range that is not a power of two and far above 2^32: 3 * 10^12 values, 12 bins.
    const int64_t range = 3'000'000'000'000;
    const std::vector<int64_t> v = to_vector<int64_t>(randint(-range / 2, range / 2, {120000}));
    std::vector<int64_t> counts(12, 0);
    for (int64_t x : v) ++counts[static_cast<size_t>((x + range / 2) / (range / 12))];
    EXPECT_LT(chi_square(counts), 11.0 + 8 * 4.7);
  }
}

TEST(OpRandint, ShapesAndDefaults) {
  seed(1);
  NDArray d = randint(0, 10, {2, 3});
  EXPECT_EQ(d.dtype(), DType::kInt64);
  EXPECT_EQ(d.device(), cpu(0));
  EXPECT_EQ(d.shape(), (Shape{2, 3}));
  EXPECT_EQ(randint(0, 10, {}).size(), 1);
  EXPECT_TRUE(to_vector<int64_t>(randint(0, 10, {0, 4})).empty());
}

// ---- permutation: values ----------------------------------------------------------------------

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(OpPermutation, IsAPermutation) {
  seed(3);
  for (int64_t n : {0, 1, 2, 3, 10, 1000, 100003}) {
    SCOPED_TRACE(n);
    NDArray a = permutation(n);
    EXPECT_EQ(a.shape(), (Shape{n}));
    EXPECT_EQ(a.dtype(), DType::kInt64);
    EXPECT_EQ(sorted(to_vector<int64_t>(a)), iota(n));
  }
  EXPECT_EQ(sorted(to_vector<int64_t>(permutation(256, DType::kUInt8))), iota(256));
  EXPECT_EQ(sorted(to_vector<int64_t>(permutation(5000, DType::kInt32))), iota(5000));
}

TEST(OpPermutation, MatchesFisherYatesOnTheStream) {
  seed(9);
  const std::vector<int64_t> got = to_vector<int64_t>(permutation(50));
  const ops::Philox gen(ops::RngKey{9, 0});
  std::vector<int64_t> want = iota(50);
  for (uint64_t i = 49; i > 0; --i) std::swap(want[i], want[plain_uniform_below(gen, i, i + 1)]);
  EXPECT_EQ(got, want);
}

TEST(OpPermutation, DiffersBetweenCallsAndRepeatsAfterSeed) {
  seed(42);
  const std::vector<int64_t> a = to_vector<int64_t>(permutation(100));
  const std::vector<int64_t> b = to_vector<int64_t>(permutation(100));
  EXPECT_NE(a, b);
  EXPECT_NE(a, iota(100));
  seed(42);
  EXPECT_EQ(to_vector<int64_t>(permutation(100)), a);
  EXPECT_EQ(to_vector<int64_t>(permutation(100)), b);
  seed(43);
  EXPECT_NE(to_vector<int64_t>(permutation(100)), a);
}

// Every one of the 24 orderings of 4 elements is about equally likely.
TEST(OpPermutation, OrderingsAreUniform) {
  seed(17);
  std::map<std::vector<int64_t>, int64_t> seen;
  for (int t = 0; t < 24 * 200; ++t) ++seen[to_vector<int64_t>(permutation(4))];
  ASSERT_EQ(seen.size(), 24u);
  std::vector<int64_t> counts;
  for (const auto& [order, count] : seen) counts.push_back(count);
  EXPECT_LT(chi_square(counts), 23.0 + 8 * 6.8) << fmt::format("{}", fmt::join(counts, " "));
}

// ---- determinism --------------------------------------------------------------------------------

std::vector<int64_t> draw_program(uint64_t s) {
  seed(s);
  NDArray a = randint(-50, 50, {100000});  // large: split among intra-op threads
  NDArray p = permutation(70001);
  NDArray u = random_uniform(0.0, 1.0, {10});  // shares the call counter
  NDArray b = randint(0, 256, {3, 333}, DType::kUInt8);
  NDArray q = permutation(17, DType::kInt32);
  NDArray c = randint(std::numeric_limits<int64_t>::min(), 1, {70001});
  std::vector<int64_t> out;
  for (const NDArray& x : {a, p, b, q, c}) {
    const std::vector<int64_t> v = to_vector<int64_t>(x);
    out.insert(out.end(), v.begin(), v.end());
  }
  for (float x : to_vector<float>(u)) out.push_back(static_cast<int64_t>(x * 1e6f));
  return out;
}

TEST(OpRandintPermutation, SameSeedSameValuesUnderEveryEngine) {
  const std::vector<int64_t> reference = draw_program(2024);
  EXPECT_EQ(draw_program(2024), reference);
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
  const std::vector<int64_t> other = draw_program(2025);
  ASSERT_EQ(other.size(), reference.size());
  size_t equal = 0;
  for (size_t i = 0; i < other.size(); ++i) equal += other[i] == reference[i];
  EXPECT_LT(equal, reference.size() / 10);
}

TEST(OpRandint, ValuesDependOnlyOnElementIndexNotShape) {
  seed(5);
  const std::vector<int64_t> flat = to_vector<int64_t>(randint(0, 1000, {1000}));
  seed(5);
  EXPECT_EQ(to_vector<int64_t>(randint(0, 1000, {8, 125})), flat);
  seed(5);
  const std::vector<int32_t> prefix = to_vector<int32_t>(randint(0, 1000, {10}, DType::kInt32));
  for (size_t i = 0; i < prefix.size(); ++i) EXPECT_EQ(prefix[i], flat[i]);
}

TEST(OpRandintPermutation, FailedCallsDoNotAdvanceTheStream) {
  seed(77);
  const std::vector<int64_t> a = to_vector<int64_t>(randint(0, 100, {50}));
  seed(77);
  EXPECT_THROW(randint(5, 5, {50}), ValueError);
  EXPECT_THROW(permutation(-1), ValueError);
  EXPECT_EQ(to_vector<int64_t>(randint(0, 100, {50})), a);
}

// ---- errors and registration ------------------------------------------------------------------

TEST(OpRandint, Errors) {
  EXPECT_THAT(error_of<ValueError>([] { randint(5, 5, {3}); }),
              HasSubstr("randint: low 5 is not below high 5, expected low < high"));
  EXPECT_THAT(error_of<ValueError>([] { randint(2, -1, {3}); }),
              HasSubstr("randint: low 2 is not below high -1, expected low < high"));
  for (DType dt :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kBool}) {
    EXPECT_THAT(
        error_of<TypeError>([&] { randint(0, 2, {3}, dt); }),
        HasSubstr(fmt::format(
            "randint: dtype {} is not an integer type, expected int32, int64 or uint8", dt)));
  }
  EXPECT_THAT(error_of<ValueError>([] { randint(-1, 10, {3}, DType::kUInt8); }),
              HasSubstr("randint: range [-1, 10) does not fit dtype uint8, expected 0 <= low and "
                        "high <= 256"));
  EXPECT_THAT(error_of<ValueError>([] { randint(0, 257, {3}, DType::kUInt8); }),
              HasSubstr("randint: range [0, 257) does not fit dtype uint8"));
  EXPECT_THAT(error_of<ValueError>([] { randint(0, (int64_t{1} << 31) + 1, {3}, DType::kInt32); }),
              HasSubstr("randint: range [0, 2147483649) does not fit dtype int32, expected "
                        "-2147483648 <= low and high <= 2147483648"));
  EXPECT_THAT(error_of<ValueError>([] { randint(-(int64_t{1} << 31) - 1, 0, {3}, DType::kInt32); }),
              HasSubstr("randint: range [-2147483649, 0) does not fit dtype int32"));
  EXPECT_THAT(error_of<ShapeError>([] {
                randint(0, 2, {2, -3});
              }),
              HasSubstr("randint: shape [2, -3] has a negative extent at axis 1"));
  const int n = num_cpu_devices();
  EXPECT_THAT(error_of<DeviceError>([&] { randint(0, 2, {2}, DType::kInt64, cpu(n)); }),
              HasSubstr(fmt::format("randint: device cpu({}) does not exist", n)));
}

TEST(OpPermutation, Errors) {
  EXPECT_THAT(error_of<ValueError>([] { permutation(-1); }),
              HasSubstr("permutation: n is -1, expected n >= 0"));
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kBool}) {
    EXPECT_THAT(error_of<TypeError>([&] { permutation(3, dt); }),
                HasSubstr(fmt::format("permutation: dtype {} is not an integer type, expected "
                                      "int32, int64 or uint8",
                                      dt)));
  }
  EXPECT_THAT(error_of<ValueError>([] { permutation(257, DType::kUInt8); }),
              HasSubstr("permutation: n 257 does not fit dtype uint8, expected n <= 256"));
  const int n = num_cpu_devices();
  EXPECT_THAT(error_of<DeviceError>([&] { permutation(2, DType::kInt64, cpu(n)); }),
              HasSubstr(fmt::format("permutation: device cpu({}) does not exist", n)));
}

TEST(OpRandintPermutation, RegisteredAsRandomNotDifferentiable) {
  for (const char* name : {"randint", "permutation"}) {
    const ops::OpDef& op = ops::get_op(name);
    EXPECT_TRUE(op.random) << name;
    EXPECT_TRUE(op.not_differentiable) << name;
    EXPECT_TRUE(op.inputs.empty()) << name;
  }
}

}  // namespace
}  // namespace janus
