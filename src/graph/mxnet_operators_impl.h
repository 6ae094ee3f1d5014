// Private to the MXNet graph reader: what mxnet_json.cc (the JSON's structure and MXNet's
// attribute strings) and mxnet_operators.cc (each MXNet operator mapped to Janus operators)
// share. Not installed.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "janus/base/error.h"
#include "janus/graph/symbol.h"
#include "janus/ops/ops.h"

namespace janus::graph::mxnet {

using Ints = std::vector<int64_t>;

[[noreturn]] void throw_format(std::string_view source, const std::string& what);

// MXNet writes every attribute value as a string: "3", "1e-05", "True", "(3, 3)", "None".
std::optional<bool> parse_bool(const std::string& s);
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_float(const std::string& s);
// "(3, 3)", "[3, 3]", "(3,)", "()", "3": the integers; nullopt when malformed.
std::optional<Ints> parse_ints(std::string_view s);

// One MXNet operator node being converted: its name, operator, attributes (each read at most
// once; what is left unread is an error) and inputs.
class Call {
 public:
  Call(std::string_view source, std::string name, std::string op,
       std::map<std::string, std::string> attrs, std::vector<Symbol> inputs)
      : source_(source),
        name_(std::move(name)),
        op_(std::move(op)),
        attrs_(std::move(attrs)),
        inputs_(std::move(inputs)) {}

  const std::string& name() const { return name_; }
  const std::string& op() const { return op_; }

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw_format(source_, fmt::format("node '{}' ({}): {}", name_, op_,
                                      fmt::format(f, std::forward<Args>(args)...)));
  }

  // The inputs, checked to number between `least` and `most`.
  const std::vector<Symbol>& inputs(size_t least, size_t most) const {
    if (inputs_.size() < least || inputs_.size() > most) {
      if (least == most) fail("has {} inputs, expected {}", inputs_.size(), least);
      fail("has {} inputs, expected {} to {}", inputs_.size(), least, most);
    }
    return inputs_;
  }
  const Symbol& input(size_t i) const { return inputs_.at(i); }

  std::optional<std::string> raw(const std::string& key) {
    used_.insert(key);
    const auto it = attrs_.find(key);
    if (it == attrs_.end()) return std::nullopt;
    return it->second;
  }
  // An attribute that must be absent, "None" or `neutral` (a feature the importer lacks).
  void require(const std::string& key, std::initializer_list<std::string_view> neutral) {
    const auto v = raw(key);
    if (!v || *v == "None") return;
    for (std::string_view n : neutral) {
      if (*v == n) return;
    }
    fail("attribute {} = '{}' is not supported (expected {})", key, *v, fmt::join(neutral, " or "));
  }
  // Attributes that only matter for training or for a particular device.
  void ignore(std::initializer_list<std::string> keys) {
    for (const std::string& k : keys) used_.insert(k);
  }
  // The attribute read by `parse`; `fallback` when absent or None, which without one is an
  // error, as is a value that `parse` refuses (`expected` says what it takes).
  template <typename T, typename Parse>
  T parsed(const std::string& key, const std::optional<T>& fallback, Parse parse,
           std::string_view expected) {
    const auto v = raw(key);
    if (!v || *v == "None") {
      if (!fallback) fail("lacks the attribute {}", key);
      return *fallback;
    }
    const std::optional<T> value = parse(*v);
    if (!value) fail("attribute {} = '{}', expected {}", key, *v, expected);
    return *value;
  }
  std::string str(const std::string& key, std::string fallback) {
    return raw(key).value_or(std::move(fallback));
  }
  bool boolean(const std::string& key, bool fallback) {
    const auto v = raw(key);
    if (!v || *v == "None") return fallback;
    const auto b = parse_bool(*v);
    if (!b) fail("attribute {} = '{}', expected True or False", key, *v);
    return *b;
  }
  int64_t integer(const std::string& key, std::optional<int64_t> fallback = std::nullopt) {
    return parsed(key, fallback, parse_int, "an integer");
  }
  double real(const std::string& key, std::optional<double> fallback = std::nullopt) {
    return parsed(key, fallback, parse_float, "a number");
  }
  // A tuple ("(1, 2)", or one integer); `fallback` when absent or None.
  Ints ints(const std::string& key, std::optional<Ints> fallback = std::nullopt) {
    return parsed(key, fallback, parse_ints, "a tuple of integers");
  }
  // A tuple of two (height, width) for the 2-D operators that Janus has.
  Ints pair(const std::string& key, Ints fallback) {
    Ints v = ints(key, fallback);
    if (v.empty()) v = fallback;
    if (v.size() == 1) v = {v[0], v[0]};
    if (v.size() != 2) {
      fail("attribute {} = ({}): only 2-D (height, width) is supported", key, fmt::join(v, ", "));
    }
    return v;
  }

  // A tuple of `dims` values (one value repeats), `fallback` in every axis when absent or
  // empty, for the convolutions over 1 to 3 spatial axes.
  Ints spatial(const std::string& key, size_t dims, int64_t fallback) {
    Ints v = ints(key, Ints{});
    if (v.empty()) return Ints(dims, fallback);
    if (v.size() == 1) return Ints(dims, v[0]);
    if (v.size() != dims) {
      fail("attribute {} = ({}), expected {} values like the kernel", key, fmt::join(v, ", "),
           dims);
    }
    return v;
  }

  // A Janus operator call, named after this node (plus `suffix` for helper nodes).
  Symbol janus(std::string_view op, const std::vector<Symbol>& in, const NamedAttrs& attrs = {},
               std::string_view suffix = "") const {
    try {
      return Symbol::op(op, in, attrs, name_ + std::string(suffix));
    } catch (const Error& e) {
      fail("mapping to Janus's {} failed: {}", op, e.what());
    }
  }
  // A constant of zeros (the bias of a layer without one).
  Symbol zeros_constant(int64_t n, std::string_view suffix) const {
    Symbol s = Symbol::var(name_ + std::string(suffix), Shape{n});
    s.outputs()[0].node->constant = janus::zeros(Shape{n});
    return s;
  }

  // Fails for any attribute that the converter did not read.
  void check_all_read() const {
    for (const auto& [key, value] : attrs_) {
      if (used_.contains(key) || (key.starts_with("__") && key.ends_with("__"))) continue;
      fail("attribute {} = '{}' is not understood by the importer", key, value);
    }
  }

 private:
  std::string_view source_;
  std::string name_;
  std::string op_;
  std::map<std::string, std::string> attrs_;
  std::set<std::string> used_;
  std::vector<Symbol> inputs_;
};

using Outputs = std::vector<Symbol>;
using Converter = std::function<Outputs(Call&)>;

// The converter of the MXNet operator `op` (legacy or numpy-mode name), or nullptr when the
// importer does not map it.
const Converter* find_converter(const std::string& op);

}  // namespace janus::graph::mxnet
