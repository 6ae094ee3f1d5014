// Tests of add, mul, add_scalar and mul_scalar against a float64 reference computed here, over
// every dtype, NumPy broadcasting, zero-size and 0-d arrays, views, and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

constexpr DType kMainDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                                 DType::kFloat16};
constexpr uint32_t kSeed = 20240611;

enum class BinOp { kAdd, kMul };
const char* name(BinOp op) { return op == BinOp::kAdd ? "add" : "mul"; }
double apply(BinOp op, double x, double y) { return op == BinOp::kAdd ? x + y : x * y; }

// Random values that the dtype holds and whose sums and products stay in range.
NDArray random_array(const Shape& shape, DType dtype, std::mt19937& rng) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (double& x : v) {
    switch (dtype) {
      case DType::kInt32:
      case DType::kInt64:
        x = std::uniform_int_distribution<int>(-1000, 1000)(rng);
        break;
      case DType::kUInt8:
        x = std::uniform_int_distribution<int>(0, 15)(rng);
        break;
      case DType::kBool:
        x = std::uniform_int_distribution<int>(0, 1)(rng);
        break;
      default:
        x = std::uniform_real_distribution<double>(-3.0, 3.0)(rng);
        break;
    }
  }
  return from_vector(v, shape, dtype);
}

// The reference result rounded as the dtype stores it (for bool: nonzero is true).
double to_dtype(double v, DType dtype) { return dtype == DType::kBool ? (v != 0.0) : v; }

// |got - want| <= atol + rtol |want|: float64 and integers are (nearly) exact; the rest get half
// an ulp of their type, with margin.
bool close(double got, double want, DType dtype) {
  double rtol = 0, atol = 0;
  switch (dtype) {
    case DType::kFloat64:
      rtol = 1e-14;
      break;
    case DType::kFloat32:
      rtol = 1e-6;
      atol = 1e-7;
      break;
    case DType::kFloat16:
      rtol = 1e-3;
      atol = 1e-4;
      break;
    case DType::kBFloat16:
      rtol = 8e-3;
      atol = 1e-3;
      break;
    default:
      break;
  }
  if (std::isnan(want)) return std::isnan(got);
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// NumPy's broadcast shape, computed independently of the library.
Shape broadcast(const Shape& a, const Shape& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> out(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    const int ia = i - (nd - a.ndim()), ib = i - (nd - b.ndim());
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    out[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(out);
}

// Flat index into `s` of output multi-index `idx` (of the broadcast rank), broadcasting s.
int64_t source_index(const Shape& s, const std::vector<int64_t>& idx) {
  const int off = static_cast<int>(idx.size()) - s.ndim();
  int64_t flat = 0;
  for (int i = 0; i < s.ndim(); ++i)
    flat = flat * s[i] + (s[i] == 1 ? 0 : idx[static_cast<size_t>(i + off)]);
  return flat;
}

std::vector<double> reference_binary(BinOp op, const std::vector<double>& a, const Shape& sa,
                                     const std::vector<double>& b, const Shape& sb,
                                     const Shape& out, DType dtype) {
  std::vector<double> r(static_cast<size_t>(out.numel()));
  std::vector<int64_t> idx(static_cast<size_t>(out.ndim()));
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    int64_t rem = flat;
    for (int d = out.ndim() - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % out[d];
      rem /= out[d];
    }
    const double x = a[static_cast<size_t>(source_index(sa, idx))];
    const double y = b[static_cast<size_t>(source_index(sb, idx))];
    r[static_cast<size_t>(flat)] = to_dtype(apply(op, x, y), dtype);
  }
  return r;
}

void expect_matches(const NDArray& got_array, const std::vector<double>& want, DType dtype,
                    const std::string& what) {
  const std::vector<double> got = to_vector<double>(got_array);
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; ++i) {
    if (!close(got[i], want[i], dtype)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want[i]
                    << " (seed " << kSeed << ")";
      ++reported;
    }
  }
}

// Runs op on random inputs of shapes sa and sb and checks shape, dtype and values.
void check_binary(BinOp op, const Shape& sa, const Shape& sb, DType dtype, std::mt19937& rng) {
  const std::string what = fmt::format("{}({}, {}) {}", name(op), sa, sb, dtype);
  SCOPED_TRACE(what);
  NDArray a = random_array(sa, dtype, rng);
  NDArray b = random_array(sb, dtype, rng);
  const std::vector<double> va = to_vector<double>(a), vb = to_vector<double>(b);
  NDArray y = op == BinOp::kAdd ? add(a, b) : mul(a, b);
  const Shape out = broadcast(sa, sb);
  EXPECT_EQ(y.shape(), out);
  EXPECT_EQ(y.dtype(), dtype);
  EXPECT_EQ(y.device(), cpu(0));
  expect_matches(y, reference_binary(op, va, sa, vb, sb, out, dtype), dtype, what);
  // The inputs are left alone (the caller still holds them).
  EXPECT_EQ(to_vector<double>(a), va);
  EXPECT_EQ(to_vector<double>(b), vb);
}

const Shape kEqualShapes[] = {
    Shape{},     Shape{1},       Shape{17},
    Shape{3, 4}, Shape{2, 3, 5}, Shape{300, 200}};  // 60000 elements: split among threads

struct ShapePair {
  Shape a, b;
};
const ShapePair kBroadcastPairs[] = {
    {{2, 3}, {3}},
    {{3}, {2, 3}},
    {{4, 1}, {1, 5}},
    {{2, 1, 3}, {1, 4, 1}},
    {{5, 1, 4}, {3, 1}},
    {{2, 3}, {}},
    {{}, {2, 3}},
    {{1}, {4}},
    {{2, 3}, {1, 1}},
    {{1, 1, 1}, {2, 3}},
    {{2, 3, 4, 5}, {3, 1, 5}},
    {{6, 1}, {6, 6}},
    {{1, 7}, {5, 1}},
    {{3, 1, 1}, {1, 1, 2}},
    {{1, 2, 1, 3}, {4, 1, 5, 1}},
    {{40000, 1}, {1, 3}}};  // the general strided loop, rows split among threads

// ---- equal shapes -----------------------------------------------------------------------------

TEST(OpAdd, EqualShapesEveryDType) {
  std::mt19937 rng(kSeed);
  for (DType dt : kAllDTypes) {
    for (const Shape& s : kEqualShapes) check_binary(BinOp::kAdd, s, s, dt, rng);
  }
}

TEST(OpMul, EqualShapesEveryDType) {
  std::mt19937 rng(kSeed + 1);
  for (DType dt : kAllDTypes) {
    for (const Shape& s : kEqualShapes) check_binary(BinOp::kMul, s, s, dt, rng);
  }
}

// ---- broadcasting -----------------------------------------------------------------------------

TEST(OpAdd, Broadcasting) {
  std::mt19937 rng(kSeed + 2);
  for (DType dt : kMainDTypes) {
    for (const ShapePair& p : kBroadcastPairs) check_binary(BinOp::kAdd, p.a, p.b, dt, rng);
  }
}

TEST(OpMul, Broadcasting) {
  std::mt19937 rng(kSeed + 3);
  for (DType dt : kMainDTypes) {
    for (const ShapePair& p : kBroadcastPairs) check_binary(BinOp::kMul, p.a, p.b, dt, rng);
  }
}

TEST(OpAdd, KnownBroadcastValues) {
  NDArray a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  NDArray row = from_vector<float>({10, 20, 30}, {3});
  EXPECT_EQ(to_vector<float>(add(a, row)), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  NDArray col = from_vector<float>({100, 200, 300, 400}, {4, 1});
  NDArray r5 = from_vector<float>({1, 2, 3, 4, 5}, {1, 5});
  const std::vector<float> y = to_vector<float>(add(col, r5));
  ASSERT_EQ(y.size(), 20u);
  EXPECT_EQ(y[0], 101);
  EXPECT_EQ(y[4], 105);
  EXPECT_EQ(y[5], 201);
  EXPECT_EQ(y[19], 405);
  NDArray p = from_vector<int32_t>({1, 2}, {2, 1, 1});
  NDArray q = from_vector<int32_t>({1, 10, 100}, {1, 3, 1});
  NDArray r = from_vector<int32_t>({1, -1}, {1, 1, 2});
  EXPECT_EQ(to_vector<int32_t>(mul(mul(p, q), r)),
            (std::vector<int32_t>{1, -1, 10, -10, 100, -100, 2, -2, 20, -20, 200, -200}));
}

TEST(OpAdd, ZeroSizeOperands) {
  std::mt19937 rng(kSeed + 4);
  const ShapePair pairs[] = {
      {{0}, {0}}, {{0, 3}, {3}}, {{2, 0}, {2, 1}},    {{0}, {1}},       {{1}, {0}},
      {{0}, {}},  {{}, {0}},     {{3, 0, 2}, {1, 2}}, {{4, 1}, {1, 0}}, {{0, 1}, {1, 5}}};
  for (DType dt : {DType::kFloat32, DType::kInt64}) {
    for (const ShapePair& p : pairs) {
      check_binary(BinOp::kAdd, p.a, p.b, dt, rng);
      check_binary(BinOp::kMul, p.a, p.b, dt, rng);
    }
  }
  EXPECT_EQ(add(zeros({4, 1}), zeros({1, 0})).shape(), (Shape{4, 0}));
}

TEST(OpAdd, ZeroDimensionalScalars) {
  NDArray a = from_vector<double>({2.5}, {});
  NDArray b = from_vector<double>({-4.0}, {});
  NDArray s = add(a, b);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(item<double>(s), -1.5);
  EXPECT_EQ(item<double>(mul(a, b)), -10.0);
  NDArray m = from_vector<double>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(to_vector<double>(mul(a, m)), (std::vector<double>{2.5, 5, 7.5, 10}));
  EXPECT_EQ(to_vector<double>(add(m, b)), (std::vector<double>{-3, -2, -1, 0}));
}

TEST(OpAdd, SpecialFloatValues) {
  const double inf = std::numeric_limits<double>::infinity();
  NDArray a = from_vector<double>({inf, -inf, inf, 1.0, std::nan("")}, {5});
  NDArray b = from_vector<double>({1.0, 1.0, -inf, 0.0, 1.0}, {5});
  const std::vector<double> s = to_vector<double>(add(a, b));
  EXPECT_EQ(s[0], inf);
  EXPECT_EQ(s[1], -inf);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], 1.0);
  EXPECT_TRUE(std::isnan(s[4]));
  const std::vector<double> p = to_vector<double>(mul(a, b));
  EXPECT_EQ(p[0], inf);
  EXPECT_EQ(p[2], -inf);
  EXPECT_EQ(p[3], 0.0);
  // float16 overflows to infinity like the hardware type would.
  NDArray h = from_vector<float>({60000.0f}, {1}, DType::kFloat16);
  EXPECT_TRUE(std::isinf(to_vector<float>(add(h, h))[0]));
}

// ---- views as operands ------------------------------------------------------------------------

TEST(OpAdd, ViewsAsOperands) {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  NDArray base = from_vector(v, {4, 6});
  NDArray rows = base.slice(1, 3);  // elements 6..17
  NDArray last = base.at(-1);       // elements 18..23
  const std::vector<float> y = to_vector<float>(add(rows, last));
  ASSERT_EQ(y.size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(y[i], static_cast<float>(6 + i) + static_cast<float>(18 + i % 6));
  const std::vector<float> z = to_vector<float>(mul(base.reshape({2, 12}).at(1), 2.0));
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(z[i], 2.0f * static_cast<float>(12 + i));
}

TEST(OpAdd, ChainedOperationsAndOperators) {
  std::mt19937 rng(kSeed + 5);
  NDArray a = random_array({50, 8}, DType::kFloat64, rng);
  NDArray b = random_array({8}, DType::kFloat64, rng);
  NDArray c = random_array({50, 1}, DType::kFloat64, rng);
  const std::vector<double> va = to_vector<double>(a), vb = to_vector<double>(b),
                            vc = to_vector<double>(c);
  NDArray y = (a + b) * c + 1.0;
  NDArray z = 2.0 * (3.0 + a) * a;
  const std::vector<double> vy = to_vector<double>(y), vz = to_vector<double>(z);
  for (size_t i = 0; i < 50; ++i) {
    for (size_t j = 0; j < 8; ++j) {
      const double x = va[i * 8 + j];
      EXPECT_DOUBLE_EQ(vy[i * 8 + j], (x + vb[j]) * vc[i] + 1.0);
      EXPECT_DOUBLE_EQ(vz[i * 8 + j], 2.0 * (3.0 + x) * x);
    }
  }
  // A long dependent chain on one array.
  NDArray acc = zeros({1000}, DType::kInt64);
  for (int i = 0; i < 100; ++i) acc = acc + ones({1000}, DType::kInt64);
  for (int64_t x : to_vector<int64_t>(acc)) ASSERT_EQ(x, 100);
}

// ---- scalar operands --------------------------------------------------------------------------

// The scalar as the dtype stores it.
double stored_scalar(double s, DType dtype) { return to_vector<double>(full({}, s, dtype))[0]; }

void check_scalar(BinOp op, const Shape& shape, double s, DType dtype, std::mt19937& rng) {
  const std::string what = fmt::format("{}_scalar({}, {}) {}", name(op), shape, s, dtype);
  SCOPED_TRACE(what);
  NDArray a = random_array(shape, dtype, rng);
  const std::vector<double> va = to_vector<double>(a);
  NDArray y = op == BinOp::kAdd ? add(a, s) : mul(a, s);
  EXPECT_EQ(y.shape(), shape);
  EXPECT_EQ(y.dtype(), dtype);
  const double ss = stored_scalar(s, dtype);
  std::vector<double> want(va.size());
  for (size_t i = 0; i < va.size(); ++i) want[i] = to_dtype(apply(op, va[i], ss), dtype);
  expect_matches(y, want, dtype, what);
  EXPECT_EQ(to_vector<double>(a), va);
}

TEST(OpAddScalar, EveryDType) {
  std::mt19937 rng(kSeed + 6);
  for (DType dt : kAllDTypes) {
    for (double s : {0.0, 1.0, 2.5, -1.75}) {
      if (dt == DType::kUInt8 && s < 0) continue;  // not representable: undefined conversion
      for (const Shape& shape : {Shape{}, Shape{0}, Shape{13}, Shape{4, 5}, Shape{250, 200}}) {
        check_scalar(BinOp::kAdd, shape, s, dt, rng);
      }
    }
  }
}

TEST(OpMulScalar, EveryDType) {
  std::mt19937 rng(kSeed + 7);
  for (DType dt : kAllDTypes) {
    for (double s : {0.0, 1.0, 2.5, -1.75}) {
      if (dt == DType::kUInt8 && s < 0) continue;  // not representable: undefined conversion
      for (const Shape& shape : {Shape{}, Shape{0}, Shape{13}, Shape{4, 5}, Shape{250, 200}}) {
        check_scalar(BinOp::kMul, shape, s, dt, rng);
      }
    }
  }
}

TEST(OpAddScalar, ScalarIsConvertedToTheDTypeFirst) {
  NDArray i = from_vector<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ(to_vector<int32_t>(add(i, 2.9)), (std::vector<int32_t>{3, 4, 5}));      // 2.9 -> 2
  EXPECT_EQ(to_vector<int32_t>(mul(i, -1.5)), (std::vector<int32_t>{-1, -2, -3}));  // -1.5 -> -1
  NDArray f = from_vector<float>({1, 2}, {2});
  EXPECT_EQ(to_vector<float>(f + 0.5), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(to_vector<float>(0.5 + f), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ(to_vector<float>(f * 4.0), (std::vector<float>{4.0f, 8.0f}));
  EXPECT_EQ(to_vector<float>(4.0 * f), (std::vector<float>{4.0f, 8.0f}));
  EXPECT_EQ(to_vector<float>(f + f), (std::vector<float>{2.0f, 4.0f}));
  EXPECT_EQ(to_vector<float>(f * f), (std::vector<float>{1.0f, 4.0f}));
}

// ---- integer wrap-around ----------------------------------------------------------------------

// Signed integers wrap around modulo 2^bits, as in NumPy, instead of overflowing (undefined
// behaviour in C++: the AddressSanitizer+UBSan build stops on it).
template <typename T>
void check_signed_wrap_around() {
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kMin = std::numeric_limits<T>::min();
  using V = std::vector<T>;
  const NDArray a = from_vector<T>({kMax, kMin, kMax, 5}, {4});
  const NDArray b = from_vector<T>({1, 1, 2, -7}, {4});
  EXPECT_EQ(to_vector<T>(add(a, b)), (V{kMin, kMin + 1, kMin + 1, -2}));
  EXPECT_EQ(to_vector<T>(subtract(a, b)), (V{kMax - 1, kMax, kMax - 2, 12}));
  EXPECT_EQ(to_vector<T>(mul(a, b)), (V{kMax, kMin, -2, -35}));
  EXPECT_EQ(to_vector<T>(add(a, 1.0)), (V{kMin, kMin + 1, kMin, 6}));
  EXPECT_EQ(to_vector<T>(1.0 + a), (V{kMin, kMin + 1, kMin, 6}));
  EXPECT_EQ(to_vector<T>(subtract(a, 1.0)), (V{kMax - 1, kMax, kMax - 1, 4}));
  EXPECT_EQ(to_vector<T>(subtract(1.0, a)), (V{kMin + 2, kMin + 1, kMin + 2, -4}));
  EXPECT_EQ(to_vector<T>(mul(a, 2.0)), (V{-2, 0, -2, 10}));
  // Broadcast operands, and an array long enough for the vectorized, multi-threaded loops.
  const NDArray one = from_vector<T>({1}, {1});
  EXPECT_EQ(to_vector<T>(add(one, a)), (V{kMin, kMin + 1, kMin, 6}));
  EXPECT_EQ(to_vector<T>(add(a, one)), (V{kMin, kMin + 1, kMin, 6}));
  const NDArray big = full({100000}, static_cast<double>(kMax), dtype_of<T>);
  EXPECT_EQ(to_vector<T>(add(big, big)), V(100000, T(-2)));
  EXPECT_EQ(to_vector<T>(add(big, one)), V(100000, kMin));
  EXPECT_EQ(to_vector<T>(mul(big, big)), V(100000, T(1)));
}

TEST(OpAdd, SignedIntegersWrapAroundAsInNumPy) {
  check_signed_wrap_around<int32_t>();
  check_signed_wrap_around<int64_t>();
}

// ---- errors -----------------------------------------------------------------------------------

TEST(OpAdd, BroadcastMismatchNamesBothShapes) {
  std::string msg = error_of<ShapeError>([] { add(zeros({2, 3}), zeros({4, 3})); });
  EXPECT_THAT(msg, HasSubstr("add: shapes [2, 3] and [4, 3] cannot be broadcast together"));
  EXPECT_THAT(msg, HasSubstr("axis -2 has extents 2 and 4, expected equal extents or 1"));
  msg = error_of<ShapeError>([] { mul(zeros({3}), zeros({2, 4})); });
  EXPECT_THAT(msg, HasSubstr("mul: shapes [3] and [2, 4] cannot be broadcast together"));
  EXPECT_THAT(msg, HasSubstr("axis -1 has extents 3 and 4"));
  msg = error_of<ShapeError>([] { add(zeros({0}), zeros({2})); });
  EXPECT_THAT(msg, HasSubstr("add: shapes [0] and [2] cannot be broadcast together"));
}

TEST(OpAdd, DTypeMismatchIsATypeError) {
  std::string msg = error_of<TypeError>([] { add(zeros({2}), zeros({2}, DType::kInt32)); });
  EXPECT_THAT(msg, HasSubstr("add: inputs have dtypes float32 and int32, expected the same dtype"));
  msg = error_of<TypeError>([] { mul(zeros({2}, DType::kFloat64), zeros({2}, DType::kFloat16)); });
  EXPECT_THAT(msg, HasSubstr("mul: inputs have dtypes float64 and float16"));
}

TEST(OpAdd, UndefinedInputsAreRejected) {
  EXPECT_THAT(error_of<ValueError>([] { add(zeros({2}), NDArray()); }),
              HasSubstr("add: input 'b' is an undefined array"));
  EXPECT_THAT(error_of<ValueError>([] { mul(NDArray(), zeros({2})); }),
              HasSubstr("mul: input 'a' is an undefined array"));
  EXPECT_THAT(error_of<ValueError>([] { add(NDArray(), 1.0); }),
              HasSubstr("add_scalar: input 'a' is an undefined array"));
}

// Two logical CPU devices for one test; restores the count after every array is released.
class OpTwoDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = num_cpu_devices();
    set_num_cpu_devices(std::max(saved_, 2));
  }
  void TearDown() override {
    wait_all();  // arrays on cpu(1) are gone: release their memory before cpu(1) disappears
    set_num_cpu_devices(saved_);
  }
  int saved_ = 1;
};

TEST_F(OpTwoDevices, DeviceMismatchNamesBothDevices) {
  NDArray a = ones({3});
  NDArray b = ones({3}, DType::kFloat32, cpu(1));
  std::string msg = error_of<DeviceError>([&] { add(a, b); });
  EXPECT_THAT(msg, HasSubstr("add: input 'b' is on cpu(1) but input 'a' is on cpu(0)"));
  EXPECT_THAT(msg, HasSubstr("copy with copyto first"));
  msg = error_of<DeviceError>([&] { mul(b, a); });
  EXPECT_THAT(msg, HasSubstr("mul: input 'b' is on cpu(0) but input 'a' is on cpu(1)"));
  // Both on cpu(1) is fine, and the result stays there.
  NDArray c = add(b, b);
  EXPECT_EQ(c.device(), cpu(1));
  EXPECT_EQ(to_vector<float>(c), (std::vector<float>{2, 2, 2}));
  NDArray d = mul(c, 3.0);
  EXPECT_EQ(d.device(), cpu(1));
  EXPECT_EQ(to_vector<float>(d), (std::vector<float>{6, 6, 6}));
}

}  // namespace
}  // namespace janus
