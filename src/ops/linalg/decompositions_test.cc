// Tests of linalg_eigh, linalg_svd and linalg_qr beyond their conformance specs: the factors
// rebuild the matrix, rank-deficient and full_matrices bases are orthonormal, and the errors'
// messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

NDArray mat(std::vector<double> v, Shape s) { return from_vector<double>(v, s, DType::kFloat64); }

// Max |x - y| over two arrays of one shape.
double max_diff(const NDArray& x, const NDArray& y) {
  const std::vector<double> a = to_vector<double>(x), b = to_vector<double>(y);
  EXPECT_EQ(a.size(), b.size());
  double d = 0.0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

NDArray identity(int64_t n) {
  std::vector<double> e(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i * n + i)] = 1.0;
  return mat(e, {n, n});
}

TEST(LinalgEigh, RebuildsTheMatrixFromItsLowerTriangle) {
  // The upper triangle holds garbage: only the lower one is read.
  const NDArray a = mat({4, 99, 99, 1, 3, 99, 2, 0, 5}, {3, 3});
  const NDArray sym = mat({4, 1, 2, 1, 3, 0, 2, 0, 5}, {3, 3});
  const auto [w, v] = linalg_eigh(a);
  const std::vector<double> values = to_vector<double>(w);
  EXPECT_TRUE(values[0] <= values[1] && values[1] <= values[2]);
  const NDArray rebuilt = matmul(mul(v, reshape(w, Shape{1, 3})), v, false, true);
  EXPECT_LT(max_diff(rebuilt, sym), 1e-12);
  EXPECT_LT(max_diff(matmul(v, v, true, false), identity(3)), 1e-12);
}

TEST(LinalgEigh, RepeatedEigenvaluesStillGiveAnOrthonormalBasis) {
  const auto [w, v] = linalg_eigh(mat({2, 0, 0, 0, 2, 0, 0, 0, 1}, {3, 3}));
  EXPECT_LT(max_diff(w, mat({1, 2, 2}, {3})), 1e-15);
  EXPECT_LT(max_diff(matmul(v, v, true, false), identity(3)), 1e-15);
}

TEST(LinalgEigh, NonFiniteEntriesAreAValueErrorAtTheWait) {
  const NDArray a = mat(
      {1, 0, 0, 1, std::numeric_limits<double>::quiet_NaN(), 0, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2},
      {2, 3, 3});
  const NDArray w = linalg_eigh(a).first;
  EXPECT_THAT(error_of<ValueError>([&] { wait_to_read(w); }),
              HasSubstr("linalg_eigh: the eigenvalues of matrix 0 of the stack [2, 3, 3] did not "
                        "converge in 100 sweeps, expected finite entries"));
}

TEST(LinalgSvd, RankDeficientMatricesGiveOrthonormalFactors) {
  // Rank 1: two of the three singular values are zero.
  const NDArray a = mat({1, 2, 3, 2, 4, 6, 3, 6, 9, 0, 0, 0}, {4, 3});
  const auto [u, s, vt] = linalg_svd(a);
  EXPECT_EQ(u.shape(), (Shape{4, 3}));
  EXPECT_EQ(vt.shape(), (Shape{3, 3}));
  const std::vector<double> sv = to_vector<double>(s);
  EXPECT_NEAR(sv[0], 14.0, 1e-12);  // |(1, 2, 3, 0)| * |(1, 2, 3)|
  EXPECT_NEAR(sv[1], 0.0, 1e-12);
  EXPECT_LT(max_diff(matmul(u, u, true, false), identity(3)), 1e-12);
  EXPECT_LT(max_diff(matmul(vt, vt, false, true), identity(3)), 1e-12);
  EXPECT_LT(max_diff(matmul(mul(u, reshape(s, Shape{1, 3})), vt), a), 1e-12);
}

TEST(LinalgSvd, FullMatricesCompleteBothBases) {
  for (const Shape shape : {Shape{4, 2}, Shape{2, 5}}) {
    const int64_t m = shape[0], n = shape[1], k = std::min(m, n);
    std::vector<double> values(static_cast<size_t>(m * n));
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(1.0 + static_cast<double>(i));
    const NDArray a = mat(values, shape);
    const auto [u, s, vt] = linalg_svd(a, true);
    EXPECT_EQ(u.shape(), (Shape{m, m}));
    EXPECT_EQ(vt.shape(), (Shape{n, n}));
    EXPECT_LT(max_diff(matmul(u, u, true, false), identity(m)), 1e-12);
    EXPECT_LT(max_diff(matmul(vt, vt, false, true), identity(n)), 1e-12);
    const auto [ur, sr, vtr] = linalg_svd(a);
    EXPECT_LT(max_diff(slice_axis(u, 1, 0, k), ur), 1e-15);
    EXPECT_LT(max_diff(slice_axis(vt, 0, 0, k), vtr), 1e-15);
    EXPECT_LT(max_diff(s, sr), 1e-15);
  }
}

TEST(LinalgSvd, FullMatricesOfANonSquareMatrixHaveNoGradient) {
  NDArray a = mat({1, 2, 3, 4, 5, 7}, {3, 2});
  autograd::attach_grad(a);
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(std::get<1>(linalg_svd(a, true)));
  }
  EXPECT_THAT(error_of<NotImplementedError>([&] { autograd::backward(loss); }),
              HasSubstr("linalg_svd: no gradient with full_matrices for a non-square input [3, "
                        "2]"));
}

TEST(LinalgSvd, ErrorsNameTheShapeAndTheDType) {
  EXPECT_THAT(error_of<ShapeError>([] {
                linalg_svd(mat({1, 2}, {2}));
              }),
              HasSubstr("linalg_svd: input has shape [2], expected matrices [..., m, n]"));
  EXPECT_THAT(error_of<TypeError>([] {
                linalg_svd(from_vector<double>({1, 2, 3, 4}, {2, 2}, DType::kInt32));
              }),
              HasSubstr("linalg_svd: dtype int32 is not supported, expected float32 or float64"));
}

TEST(LinalgQr, CompleteTallMatricesGiveASquareOrthogonalQ) {
  const NDArray a = mat({1, 2, 3, 4, 5, 7, 0, 1}, {4, 2});
  const auto [q, r] = linalg_qr(a, true);
  EXPECT_EQ(q.shape(), (Shape{4, 4}));
  EXPECT_EQ(r.shape(), (Shape{4, 2}));
  EXPECT_LT(max_diff(matmul(q, q, true, false), identity(4)), 1e-12);
  EXPECT_LT(max_diff(matmul(q, r), a), 1e-12);
  const std::vector<double> rv = to_vector<double>(r);
  EXPECT_EQ(rv[2], 0.0);  // below the diagonal: exactly zero
  EXPECT_GT(rv[0], 0.0);
  EXPECT_GT(rv[3], 0.0);
  EXPECT_EQ(rv[4] + rv[5] + rv[6] + rv[7], 0.0);
}

TEST(LinalgQr, CompleteTallMatricesHaveNoGradient) {
  NDArray a = mat({1, 2, 3, 4, 5, 7}, {3, 2});
  autograd::attach_grad(a);
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(linalg_qr(a, true).second);
  }
  EXPECT_THAT(error_of<NotImplementedError>([&] { autograd::backward(loss); }),
              HasSubstr("linalg_qr: no gradient with complete for an input [3, 2] with more rows "
                        "than columns"));
}

}  // namespace
}  // namespace janus
