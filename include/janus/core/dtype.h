// Element types, their C++ storage types, and dispatch from a runtime DType to a template.
// Layer: core.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace janus {

enum class DType : uint8_t {
  kFloat32 = 0,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
};

inline constexpr int kNumDTypes = 8;

/// IEEE 754 binary16, stored as bits; arithmetic goes through float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  float16(float f);        // NOLINT(google-explicit-constructor): numeric conversion, as for float
  operator float() const;  // NOLINT(google-explicit-constructor)
};

/// bfloat16: the upper half of a float32, rounded to nearest even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f) {  // NOLINT(google-explicit-constructor)
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a (quiet) NaN
      bits = static_cast<uint16_t>((u >> 16) | 0x40u);
      return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = static_cast<uint16_t>(u >> 16);
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

std::string_view dtype_name(DType dtype);
/// Parses "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool";
/// throws TypeError naming the text otherwise.
DType parse_dtype(std::string_view name);

constexpr size_t dtype_size(DType dtype) {
  constexpr size_t kSizes[kNumDTypes] = {4, 8, 2, 2, 4, 8, 1, 1};
  return kSizes[static_cast<int>(dtype)];
}

constexpr bool is_floating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<float16> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<bfloat16> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

/// The DType of C++ type T (float -> kFloat32, ...).
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

/// Calls `f.template operator()<T>()` with T the storage type of `dtype`:
///   dispatch_dtype(x.dtype(), [&]<typename T>() { fill<T>(x); });
template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f.template operator()<float>();
    case DType::kFloat64:
      return f.template operator()<double>();
    case DType::kFloat16:
      return f.template operator()<float16>();
    case DType::kBFloat16:
      return f.template operator()<bfloat16>();
    case DType::kInt32:
      return f.template operator()<int32_t>();
    case DType::kInt64:
      return f.template operator()<int64_t>();
    case DType::kUInt8:
      return f.template operator()<uint8_t>();
    case DType::kBool:
      return f.template operator()<bool>();
  }
  return f.template operator()<float>();  // unreachable: every enumerator is handled above
}

}  // namespace janus

template <>
struct fmt::formatter<janus::DType> : fmt::formatter<std::string_view> {
  auto format(janus::DType d, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(janus::dtype_name(d), ctx);
  }
};
