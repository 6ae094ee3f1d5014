// Tests of dtype.h: names, sizes, dispatch, and the float16 / bfloat16 conversions.
#include "janus/core/dtype.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "janus/base/error.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

float bits_to_float(uint32_t u) { return std::bit_cast<float>(u); }
uint16_t half_bits(float f) { return float16(f).bits; }
float half_value(uint16_t bits) {
  float16 h;
  h.bits = bits;
  return static_cast<float>(h);
}
uint16_t bf16_bits(float f) { return bfloat16(f).bits; }
float bf16_value(uint16_t bits) {
  bfloat16 h;
  h.bits = bits;
  return static_cast<float>(h);
}

// ---- names, sizes, parsing ------------------------------------------------------------------

TEST(DType, SizesMatchStorageTypes) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat64), 8u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kUInt8), 1u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  static_assert(dtype_size(DType::kFloat64) == 8, "dtype_size is constexpr");
  static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);
}

TEST(DType, NamesRoundTripThroughParse) {
  for (DType d : kAllDTypes) {
    const std::string_view name = dtype_name(d);
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(parse_dtype(name), d) << name;
    EXPECT_EQ(fmt::format("{}", d), name);
  }
  EXPECT_EQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_name(DType::kUInt8), "uint8");
  EXPECT_EQ(parse_dtype("int64"), DType::kInt64);
}

TEST(DType, ParseRejectsUnknownNamesAndNamesTheText) {
  for (const char* bad : {"float", "Float32", "int", "float32 ", "", "f32", "double"}) {
    try {
      parse_dtype(bad);
      ADD_FAILURE() << "parse_dtype accepted '" << bad << "'";
    } catch (const TypeError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("unknown name '{}'", bad)));
      EXPECT_THAT(e.what(), HasSubstr("expected one of float32"));
    }
  }
}

TEST(DType, IsFloatingAndDTypeOf) {
  EXPECT_TRUE(is_floating(DType::kFloat32));
  EXPECT_TRUE(is_floating(DType::kFloat64));
  EXPECT_TRUE(is_floating(DType::kFloat16));
  EXPECT_TRUE(is_floating(DType::kBFloat16));
  EXPECT_FALSE(is_floating(DType::kInt32));
  EXPECT_FALSE(is_floating(DType::kInt64));
  EXPECT_FALSE(is_floating(DType::kUInt8));
  EXPECT_FALSE(is_floating(DType::kBool));
  static_assert(dtype_of<float> == DType::kFloat32);
  static_assert(dtype_of<double> == DType::kFloat64);
  static_assert(dtype_of<float16> == DType::kFloat16);
  static_assert(dtype_of<bfloat16> == DType::kBFloat16);
  static_assert(dtype_of<int32_t> == DType::kInt32);
  static_assert(dtype_of<int64_t> == DType::kInt64);
  static_assert(dtype_of<uint8_t> == DType::kUInt8);
  static_assert(dtype_of<bool> == DType::kBool);
}

TEST(DType, DispatchCallsTheStorageType) {
  for (DType d : kAllDTypes) {
    int calls = 0;
    const size_t size = dispatch_dtype(d, [&]<typename T>() {
      ++calls;
      EXPECT_EQ(dtype_of<T>, d) << dtype_name(d);
      return sizeof(T);
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(size, dtype_size(d)) << dtype_name(d);
  }
}

TEST(DType, DispatchForwardsReferences) {
  int target = 0;
  int& ref = dispatch_dtype(DType::kInt32, [&]<typename T>() -> int& { return target; });
  ref = 7;
  EXPECT_EQ(target, 7);
}

// ---- float16 ----------------------------------------------------------------------------------

TEST(DTypeFloat16, ExactValues) {
  EXPECT_EQ(half_bits(0.0f), 0x0000);
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
  EXPECT_EQ(half_bits(1.0f), 0x3c00);
  EXPECT_EQ(half_bits(-2.0f), 0xc000);
  EXPECT_EQ(half_bits(0.5f), 0x3800);
  EXPECT_EQ(half_bits(65504.0f), 0x7bff);                  // largest finite
  EXPECT_EQ(half_bits(6.103515625e-05f), 0x0400);          // smallest normal, 2^-14
  EXPECT_EQ(half_bits(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(half_bits(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(half_value(0x3c00), 1.0f);
  EXPECT_EQ(half_value(0x7bff), 65504.0f);
  EXPECT_EQ(half_value(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_value(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_value(0xbc00), -1.0f);
  EXPECT_TRUE(std::signbit(half_value(0x8000)));
  EXPECT_EQ(half_value(0x8000), 0.0f);
}

TEST(DTypeFloat16, OverflowGoesToInfinityAtTheRoundingBoundary) {
  EXPECT_EQ(half_bits(65519.0f), 0x7bff);  // below the midpoint 65520: rounds down
  EXPECT_EQ(half_bits(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(half_bits(65520.0f), 0x7c00);  // midpoint, ties to even (infinity)
  EXPECT_EQ(half_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(half_bits(1e10f), 0x7c00);
  EXPECT_EQ(half_bits(std::numeric_limits<float>::max()), 0x7c00);
}

TEST(DTypeFloat16, InfinityAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(half_bits(inf), 0x7c00);
  EXPECT_EQ(half_bits(-inf), 0xfc00);
  EXPECT_EQ(half_value(0x7c00), inf);
  EXPECT_EQ(half_value(0xfc00), -inf);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const uint16_t h = half_bits(nan);
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(half_value(h)));
  // A signalling NaN whose payload lives only in the low bits must not become infinity.
  EXPECT_TRUE(std::isnan(half_value(half_bits(bits_to_float(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(half_value(half_bits(bits_to_float(0xffc00000u)))));
  EXPECT_TRUE(std::isnan(half_value(0x7c01)));
  EXPECT_TRUE(std::isnan(half_value(0xfe00)));
}

TEST(DTypeFloat16, RoundsToNearestEvenInTheNormalRange) {
  const float ulp = std::ldexp(1.0f, -10);                    // spacing of halves in [1, 2)
  EXPECT_EQ(half_bits(1.0f + ulp / 2), 0x3c00);               // tie, 0x3c00 is even
  EXPECT_EQ(half_bits(1.0f + 3 * ulp / 2), 0x3c02);           // tie, 0x3c01 is odd: up
  EXPECT_EQ(half_bits(1.0f + ulp / 2 + ulp / 1024), 0x3c01);  // just above the tie
  EXPECT_EQ(half_bits(1.0f + ulp / 2 - ulp / 1024), 0x3c00);  // just below the tie
  EXPECT_EQ(half_bits(-(1.0f + 3 * ulp / 2)), 0xbc02);
  // Rounding that carries into the exponent: just below 2 rounds to 2.
  EXPECT_EQ(half_bits(2.0f - ulp / 4), 0x4000);
}

TEST(DTypeFloat16, RoundsToNearestEvenInTheSubnormalRange) {
  const float unit = std::ldexp(1.0f, -24);
  EXPECT_EQ(half_bits(unit / 2), 0x0000);   // tie between 0 and 1 unit: even is 0
  EXPECT_EQ(half_bits(-unit / 2), 0x8000);  // keeps the sign
  EXPECT_EQ(half_bits(unit * 0.50001f), 0x0001);
  EXPECT_EQ(half_bits(unit / 4), 0x0000);
  EXPECT_EQ(half_bits(unit * 1.5f), 0x0002);     // tie between 1 and 2: even is 2
  EXPECT_EQ(half_bits(unit * 2.5f), 0x0002);     // tie between 2 and 3: even is 2
  EXPECT_EQ(half_bits(unit * 1023.5f), 0x0400);  // tie at the top: rounds into the normals
  EXPECT_EQ(half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(DTypeFloat16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = half_value(bits);
    const bool is_nan = (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(std::isnan(half_value(half_bits(f)))) << std::hex << b;
    } else {
      ASSERT_EQ(half_bits(f), bits) << std::hex << b << " -> " << f;
    }
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 conversion (IEEE round-to-nearest-even) as an independent reference,
// over a strided sweep of all float bit patterns and random ones.
TEST(DTypeFloat16, MatchesCompilerConversionOnManyFloats) {
  auto check = [](uint32_t u) {
    const float f = std::bit_cast<float>(u);
    if (std::isnan(f)) return;
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    ASSERT_EQ(half_bits(f), expected) << std::hex << "float bits 0x" << u << " = " << f;
  };
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) check(static_cast<uint32_t>(u));
  std::mt19937 rng(1234);
  for (int i = 0; i < 200000; ++i) check(static_cast<uint32_t>(rng()));
  // Dense around the interesting exponents: subnormal edge, 1.0 and the overflow edge.
  for (uint32_t base : {0x38800000u, 0x33000000u, 0x3f800000u, 0x477fe000u}) {
    for (uint32_t d = 0; d < 0x4000; ++d) {
      check(base + d);
      check(base - d);
      check((base + d) | 0x80000000u);
    }
  }
}
#endif

// ---- bfloat16 ---------------------------------------------------------------------------------

TEST(DTypeBFloat16, ExactValuesAndRounding) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16_value(0x3f80), 1.0f);
  EXPECT_EQ(bf16_bits(bits_to_float(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(bf16_bits(bits_to_float(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(bf16_bits(bits_to_float(0x3f808001u)), 0x3f81);  // above the tie
  EXPECT_EQ(bf16_bits(bits_to_float(0x3f807fffu)), 0x3f80);  // below the tie
  EXPECT_EQ(bf16_bits(bits_to_float(0x3fffc000u)), 0x4000);  // carries into the exponent
  // Subnormals keep their upper bits.
  EXPECT_EQ(bf16_bits(bits_to_float(0x00010000u)), 0x0001);
}

TEST(DTypeBFloat16, InfinityNaNAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_bits(inf), 0x7f80);
  EXPECT_EQ(bf16_bits(-inf), 0xff80);
  EXPECT_EQ(bf16_value(0x7f80), inf);
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload is only in the low half must stay a NaN, not become infinity.
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(bits_to_float(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(bf16_value(bf16_bits(bits_to_float(0xff800001u)))));
  // The largest float rounds up to infinity (round to nearest even).
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16_bits(bits_to_float(0x7f7f0000u)), 0x7f7f);  // largest finite bfloat16
}

TEST(DTypeBFloat16, EveryBFloat16RoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = bf16_value(bits);
    const bool is_nan = (bits & 0x7f80) == 0x7f80 && (bits & 0x007f) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_TRUE(std::isnan(bf16_value(bf16_bits(f)))) << std::hex << b;
    } else {
      ASSERT_EQ(bf16_bits(f), bits) << std::hex << b;
    }
  }
}

TEST(DTypeBFloat16, RelativeErrorIsAtMostHalfAnUlp) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-1e6f, 1e6f);
  for (int i = 0; i < 100000; ++i) {
    const float f = dist(rng);
    const float r = bf16_value(bf16_bits(f));
    ASSERT_LE(std::fabs(r - f), std::fabs(f) * (1.0f / 256.0f)) << f;
  }
}

}  // namespace
}  // namespace janus
