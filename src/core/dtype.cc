// DType names and the float16 conversions.
#include "janus/core/dtype.h"

#include <bit>
#include <cmath>

#include "janus/base/error.h"

namespace janus {
namespace {
constexpr std::string_view kNames[kNumDTypes] = {"float32", "float64", "float16", "bfloat16",
                                                 "int32",   "int64",   "uint8",   "bool"};
}  // namespace

std::string_view dtype_name(DType dtype) { return kNames[static_cast<int>(dtype)]; }

DType parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kNames[i] == name) return static_cast<DType>(i);
  }
  JANUS_THROW(TypeError,
              "dtype: unknown name '{}', expected one of float32, float64, float16, bfloat16, "
              "int32, int64, uint8, bool",
              name);
}

// binary32 -> binary16 with round-to-nearest-even, overflow to infinity, subnormals kept.
float16::float16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN
    bits = static_cast<uint16_t>(sign | 0x7e00u);
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: infinity
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale so that the half subnormal unit (2^-24) becomes 1, then round to nearest even.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24, exact
    const float r = std::nearbyint(scaled);  // the default rounding mode: to nearest even
    bits = static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
    return;
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  bits = static_cast<uint16_t>(sign | h);
}

float16::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t man = bits & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

}  // namespace janus
