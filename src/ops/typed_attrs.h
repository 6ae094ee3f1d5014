// Typed attributes: each operator family reads its attribute list once into a struct whose
// fields are named after the registered attributes, instead of `attrs.get<T>(4)` by position.
// Private to src/ops.
//
//   struct PadAttrs {
//     std::vector<int64_t> widths;
//     double value = 0.0;
//     static constexpr auto fields() {
//       return std::tuple{field("widths", &PadAttrs::widths), field("value", &PadAttrs::value)};
//     }
//     static PadAttrs from(const Attrs& attrs) { return read_attrs<PadAttrs>(attrs); }
//   };
//
//   JANUS_DEFINE_OP({..., .attrs = {{"widths", ...}, {"value", ...}},
//                    .attr_fields = attr_fields<PadAttrs>(), ...});
//   const PadAttrs a = PadAttrs::from(args.attrs);
//
// Field i reads attribute i; register_op checks that its name and type are those of the
// registered attribute i (OpDef::attr_fields), and registry_test that every operator with
// attributes has a struct, so a field cannot read another attribute's position.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "janus/base/error.h"
#include "janus/ops/activation.h"
#include "janus/ops/registry.h"

namespace janus::ops {

/// A field of struct S: member `member` holds the attribute called `name`. An Activation field
/// accepts the names of `allowed` only (empty: any).
template <typename S, typename T>
struct AttrField {
  std::string_view name;
  T S::*member;
  std::span<const Activation> allowed = {};
};

template <typename S, typename T>
constexpr AttrField<S, T> field(std::string_view name, T S::*member,
                                std::span<const Activation> allowed = {}) {
  return {name, member, allowed};
}

namespace detail {

template <typename T>
struct AttrTraits;
template <>
struct AttrTraits<int64_t> {
  static constexpr AttrType kType = AttrType::kInt;
};
template <>
struct AttrTraits<double> {
  static constexpr AttrType kType = AttrType::kFloat;
};
template <>
struct AttrTraits<bool> {
  static constexpr AttrType kType = AttrType::kBool;
};
template <>
struct AttrTraits<std::string> {
  static constexpr AttrType kType = AttrType::kString;
};
template <>
struct AttrTraits<std::vector<int64_t>> {
  static constexpr AttrType kType = AttrType::kInts;
};
template <>
struct AttrTraits<Shape> {
  static constexpr AttrType kType = AttrType::kShape;
};
template <>
struct AttrTraits<DType> {
  static constexpr AttrType kType = AttrType::kDType;
};
template <>
struct AttrTraits<Device> {
  static constexpr AttrType kType = AttrType::kDevice;
};
template <>
struct AttrTraits<Activation> {
  static constexpr AttrType kType = AttrType::kString;  // the name, as graph files keep it
};

/// The operator named in errors about `attrs`.
inline std::string_view attrs_owner(const Attrs& attrs) {
  return attrs.op() != nullptr ? attrs.op()->name : std::string_view("(unbound attributes)");
}

// Owner: the struct that declares the member, S itself or a base of it.
/// Checks that field `index` of a struct, called `field`, reads the attribute of that name in
/// `op`: a struct read from another operator's attributes is our bug.
inline void check_field_name(const OpDef& op, size_t index, std::string_view field) {
  JANUS_ASSERT(op.attrs[index].name == field,
               "{}: attribute {} is '{}', but the struct that reads it calls it '{}'", op.name,
               index, op.attrs[index].name, field);
}

template <typename Owner, typename T, typename S>
void read_field(const Attrs& attrs, size_t index, const AttrField<Owner, T>& f, S& out) {
  if constexpr (std::is_same_v<T, Activation>) {
    out.*f.member =
        parse_activation(attrs.get<std::string>(index), attrs_owner(attrs), f.name, f.allowed);
  } else {
    out.*f.member = attrs.get<T>(index);
  }
}

}  // namespace detail

/// The fields of S by name and type, in order (for OpDef::attr_fields).
template <typename S>
std::vector<AttrFieldDef> attr_fields() {
  return std::apply(
      [](const auto&... f) {
        return std::vector<AttrFieldDef>{AttrFieldDef{
            f.name, detail::AttrTraits<
                        std::remove_cvref_t<decltype(std::declval<S&>().*f.member)>>::kType}...};
      },
      S::fields());
}

/// Reads a completed attribute list (complete_attrs) into S, field i from attribute i, after
/// checking that field i has the name of the operator's attribute i (InternalError otherwise:
/// S belongs to another operator). An Activation field throws ValueError for a name it does not
/// allow.
template <typename S>
S read_attrs(const Attrs& attrs) {
  constexpr auto kFields = S::fields();
  constexpr size_t kCount = std::tuple_size_v<decltype(kFields)>;
  JANUS_ASSERT(attrs.size() == kCount, "{}: {} attribute values for the {} fields of its struct",
               detail::attrs_owner(attrs), attrs.size(), kCount);
  S out{};
  [&]<size_t... I>(std::index_sequence<I...>) {
    if (const OpDef* op = attrs.op(); op != nullptr) {
      (detail::check_field_name(*op, I, std::get<I>(kFields).name), ...);
    }
    (detail::read_field(attrs, I, std::get<I>(kFields), out), ...);
  }
  (std::make_index_sequence<kCount>{});
  return out;
}

}  // namespace janus::ops
