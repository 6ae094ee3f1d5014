// The activation name table and its parser.
#include "janus/ops/activation.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "janus/base/error.h"

namespace janus::ops {
namespace {

constexpr std::string_view kNames[] = {"", "relu", "sigmoid", "tanh", "softrelu", "gelu", "leaky"};
static_assert(std::size(kNames) == kActivationCount);
static_assert(std::size(kAllActivations) == kActivationCount);

std::string quoted_names(std::span<const Activation> allowed) {
  std::string out;
  for (Activation a : allowed) {
    if (!out.empty()) out += ", ";
    out +=
        a == Activation::kNone ? std::string("'' (none)") : fmt::format("'{}'", activation_name(a));
  }
  return out;
}

}  // namespace

std::string_view activation_name(Activation a) { return kNames[static_cast<size_t>(a)]; }

Activation parse_activation(std::string_view name, std::string_view op, std::string_view attr,
                            std::span<const Activation> allowed) {
  if (allowed.empty()) allowed = kAllActivations;
  const auto it =
      std::ranges::find_if(allowed, [&](Activation a) { return activation_name(a) == name; });
  JANUS_CHECK(it != allowed.end(), ValueError, "{}: attribute '{}' is '{}', expected one of {}", op,
              attr, name, quoted_names(allowed));
  return *it;
}

}  // namespace janus::ops
