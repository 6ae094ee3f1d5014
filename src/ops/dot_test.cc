// Tests of dot: op(a) · op(b) against a float64 reference for many shapes and every transpose
// combination, degenerate extents, views as operands, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kSeed = 777;

NDArray random_matrix(int64_t rows, int64_t cols, DType dtype, std::mt19937& rng) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& x : v) x = dist(rng);
  return from_vector(v, {rows, cols}, dtype);
}

struct Mnk {
  int64_t m, n, k;
};

// C[i][j] = sum_p op(A)[i][p] op(B)[p][j] in double; `scale` gets sum_p |op(A)[i][p] op(B)[p][j]|,
// the natural size of the rounding error of entry (i, j).
void reference_dot(const std::vector<double>& a, const std::vector<double>& b, const Mnk& s,
                   bool ta, bool tb, std::vector<double>& c, std::vector<double>& scale) {
  c.assign(static_cast<size_t>(s.m * s.n), 0.0);
  scale.assign(c.size(), 0.0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        const double x =
            ta ? a[static_cast<size_t>(p * s.m + i)] : a[static_cast<size_t>(i * s.k + p)];
        const double y =
            tb ? b[static_cast<size_t>(j * s.k + p)] : b[static_cast<size_t>(p * s.n + j)];
        sum += x * y;
        mag += std::fabs(x * y);
      }
      c[static_cast<size_t>(i * s.n + j)] = sum;
      scale[static_cast<size_t>(i * s.n + j)] = mag;
    }
  }
}

void check_dot(const Mnk& s, bool ta, bool tb, DType dtype, std::mt19937& rng) {
  const std::string what =
      fmt::format("dot m={} n={} k={} ta={} tb={} {}", s.m, s.n, s.k, ta, tb, dtype);
  SCOPED_TRACE(what);
  NDArray a = ta ? random_matrix(s.k, s.m, dtype, rng) : random_matrix(s.m, s.k, dtype, rng);
  NDArray b = tb ? random_matrix(s.n, s.k, dtype, rng) : random_matrix(s.k, s.n, dtype, rng);
  NDArray c = dot(a, b, ta, tb);
  EXPECT_EQ(c.shape(), (Shape{s.m, s.n}));
  EXPECT_EQ(c.dtype(), dtype);
  EXPECT_EQ(c.device(), cpu(0));
  std::vector<double> want, scale;
  reference_dot(to_vector<double>(a), to_vector<double>(b), s, ta, tb, want, scale);
  const std::vector<double> got = to_vector<double>(c);
  ASSERT_EQ(got.size(), want.size());
  const double rtol = dtype == DType::kFloat32 ? 1e-4 : 1e-12;
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= rtol * (scale[i] + 1e-6))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want[i]
                    << " (seed " << kSeed << ")";
      ++reported;
    }
  }
}

const Mnk kShapes[] = {{1, 1, 1},    {2, 4, 3},    {3, 5, 1},     {5, 1, 7},     {1, 1, 300},
                       {16, 16, 16}, {33, 65, 17}, {64, 32, 128}, {100, 80, 50}, {7, 129, 3}};

TEST(OpDot, MatchesFloat64ReferenceFloat32) {
  std::mt19937 rng(kSeed);
  for (const Mnk& s : kShapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) check_dot(s, ta, tb, DType::kFloat32, rng);
    }
  }
}

TEST(OpDot, MatchesFloat64ReferenceFloat64) {
  std::mt19937 rng(kSeed + 1);
  for (const Mnk& s : kShapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) check_dot(s, ta, tb, DType::kFloat64, rng);
    }
  }
}

TEST(OpDot, LargerProduct) {
  std::mt19937 rng(kSeed + 2);
  check_dot({256, 192, 320}, false, false, DType::kFloat32, rng);
  check_dot({256, 192, 320}, true, true, DType::kFloat32, rng);
}

TEST(OpDot, KnownValues) {
  NDArray a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  NDArray b = from_vector<float>({5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(to_vector<float>(dot(a, b)), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(to_vector<float>(dot(a, b, true, false)), (std::vector<float>{26, 30, 38, 44}));
  EXPECT_EQ(to_vector<float>(dot(a, b, false, true)), (std::vector<float>{17, 23, 39, 53}));
  EXPECT_EQ(to_vector<float>(dot(a, b, true, true)), (std::vector<float>{23, 31, 34, 46}));
  // [2, 3] · [3, 1]
  NDArray m = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray v = from_vector<double>({1, 0, -1}, {3, 1});
  EXPECT_EQ(to_vector<double>(dot(m, v)), (std::vector<double>{-2, -2}));
  // The same shape twice (a cached primitive) gives the same answer.
  EXPECT_EQ(to_vector<float>(dot(a, b)), (std::vector<float>{19, 22, 43, 50}));
}

TEST(OpDot, EmptyInnerDimensionGivesZeros) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    // Fill the output's pool block with garbage first, so that zeros must really be written.
    {
      std::vector<NDArray> junk;
      for (int i = 0; i < 8; ++i) junk.push_back(full({3, 4}, 123.0, dt));
      for (const NDArray& j : junk) wait_to_read(j);
    }
    NDArray c = dot(zeros({3, 0}, dt), zeros({0, 4}, dt));
    EXPECT_EQ(c.shape(), (Shape{3, 4}));
    for (double x : to_vector<double>(c)) EXPECT_EQ(x, 0.0);
    NDArray t = dot(zeros({0, 2}, dt), zeros({5, 0}, dt), true, true);
    EXPECT_EQ(t.shape(), (Shape{2, 5}));
    for (double x : to_vector<double>(t)) EXPECT_EQ(x, 0.0);
  }
}

TEST(OpDot, EmptyOuterDimensions) {
  std::mt19937 rng(kSeed + 3);
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    check_dot({0, 3, 5}, false, false, dt, rng);
    check_dot({4, 0, 5}, false, true, dt, rng);
    check_dot({0, 0, 0}, true, false, dt, rng);
  }
}

TEST(OpDot, ViewsAsOperands) {
  std::mt19937 rng(kSeed + 4);
  NDArray big = random_matrix(10, 6, DType::kFloat32, rng);
  NDArray a = big.slice(3, 7);                    // [4, 6], offset 18 floats (not 64-aligned)
  NDArray b = big.reshape({20, 3}).slice(4, 10);  // [6, 3]
  std::vector<double> want, scale;
  reference_dot(to_vector<double>(a), to_vector<double>(b), {4, 3, 6}, false, false, want, scale);
  const std::vector<double> got = to_vector<double>(dot(a, b));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (scale[i] + 1e-6));
}

TEST(OpDot, ChainedProducts) {
  // (A · B) · C with the second product waiting on the first.
  NDArray a = from_vector<double>({1, 2, 3, 4}, {2, 2});
  NDArray id = from_vector<double>({1, 0, 0, 1}, {2, 2});
  NDArray y = dot(dot(a, id), dot(id, a), false, true);  // A · Aᵀ
  EXPECT_EQ(to_vector<double>(y), (std::vector<double>{5, 11, 11, 25}));
}

// ---- errors -----------------------------------------------------------------------------------

// Two devices run one cached product (same shape) at the same time: each run needs its own
// oneDNN scratchpad. With the primitive's own, shared one, nearly every product came out wrong.
TEST(OpDot, TheSameShapeOnTwoDevicesAtOnce) {
  const ScopedCpuDevices devices(2);
  // Workers that split the cores between both devices; the next test gets a fresh engine.
  set_engine(EngineKind::kThreaded, engine_options_from_env());
  struct Restore {
    ~Restore() { set_engine(EngineKind::kThreaded, engine_options_from_env()); }
  } restore;
  std::mt19937 rng(kSeed);
  const NDArray a = random_matrix(32, 784, DType::kFloat32, rng);
  const NDArray b = random_matrix(256, 784, DType::kFloat32, rng);
  const NDArray a1 = copyto(a, cpu(1)), b1 = copyto(b, cpu(1));
  std::vector<NDArray> products;
  for (int i = 0; i < 50; ++i) {
    products.push_back(dot(a, b, false, true));
    products.push_back(dot(a1, b1, false, true));
  }
  const std::vector<float> want = to_vector<float>(products[0]);
  for (size_t i = 1; i < products.size(); ++i) {
    ASSERT_EQ(to_vector<float>(products[i]), want) << "product " << i;
  }
}

TEST(OpDot, InnerDimensionMismatchNamesBothShapes) {
  std::string msg = error_of<ShapeError>([] { dot(zeros({2, 3}), zeros({4, 5})); });
  EXPECT_THAT(msg, HasSubstr("dot: inner dimensions differ"));
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));
  EXPECT_THAT(msg, HasSubstr("[4, 5]"));
  EXPECT_THAT(msg, HasSubstr("gives 3 and 4, expected them equal"));
  // With transposes the message marks the transposed operand.
  msg = error_of<ShapeError>([] { dot(zeros({3, 2}), zeros({4, 3}), true, false); });
  EXPECT_THAT(msg, HasSubstr("[3, 2]ᵀ · [4, 3] gives 3 and 4"));
  msg = error_of<ShapeError>([] { dot(zeros({2, 3}), zeros({5, 4}), false, true); });
  EXPECT_THAT(msg, HasSubstr("[2, 3] · [5, 4]ᵀ gives 3 and 4"));
  // A product that fits only after transposing is rejected without it.
  EXPECT_THROW(dot(zeros({2, 3}), zeros({2, 3})), ShapeError);
  // Waited on: a oneDNN kernel still running when the process exits can crash it (see the
  // engine's shutdown_at_exit).
  EXPECT_EQ(to_vector<float>(dot(zeros({2, 3}), zeros({2, 3}), false, true)).size(), 4u);
}

TEST(OpDot, DTypeErrors) {
  std::string msg = error_of<TypeError>([] { dot(zeros({2, 2}), zeros({2, 2}, DType::kFloat64)); });
  EXPECT_THAT(msg,
              HasSubstr("dot: operands have dtypes float32 and float64, expected the same dtype"));
  for (DType dt : {DType::kInt32, DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kBool}) {
    msg = error_of<TypeError>([&] { dot(zeros({2, 2}, dt), zeros({2, 2}, dt)); });
    EXPECT_THAT(msg, HasSubstr(fmt::format("dot: dtype {} is not supported, expected float32 or "
                                           "float64",
                                           dt)));
  }
}

TEST(OpDot, OnlyTwoDimensionalOperands) {
  std::string msg = error_of<NotImplementedError>([] { dot(zeros({2, 3, 4}), zeros({4, 5})); });
  EXPECT_THAT(msg, HasSubstr("dot: operands have shapes [2, 3, 4] and [4, 5]"));
  EXPECT_THAT(msg, HasSubstr("only 2-D operands are supported (use matmul"));
  msg = error_of<NotImplementedError>([] { dot(zeros({3}), zeros({3})); });
  EXPECT_THAT(msg, HasSubstr("operands have shapes [3] and [3]"));
  msg = error_of<NotImplementedError>([] { dot(zeros({}), zeros({2, 2})); });
  EXPECT_THAT(msg, HasSubstr("operands have shapes [] and [2, 2]"));
}

TEST(OpDot, UndefinedOperand) {
  EXPECT_THAT(error_of<ValueError>([] {
                dot(zeros({2, 2}), NDArray());
              }),
              HasSubstr("dot: input 'b' is an undefined array"));
}

}  // namespace
}  // namespace janus

namespace janus {
namespace {

// oneDNN creates static state the first time an implementation runs; a product still running
// at exit must finish before that state is destroyed (the engine drains at exit).
TEST(OpDotExit, ExitWithAProductInFlightIsClean) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int i = 0; i < 8; ++i) {
    EXPECT_EXIT(
        {
          NDArray c = dot(zeros({200, 300}), zeros({300, 200}));
          std::exit(0);
        },
        testing::ExitedWithCode(0), "")
        << "run " << i;
  }
}

}  // namespace
}  // namespace janus
