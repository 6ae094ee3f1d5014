// The MXNet 1.x graph reader: the JSON's structure (nodes, inputs, arg_nodes, heads) and
// MXNet's attribute strings here; each MXNet operator is mapped to Janus operators by its
// converter in mxnet_operators.cc.
#include "janus/graph/mxnet_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"

#include "mxnet_operators_impl.h"

namespace janus::graph {
namespace mxnet {

void throw_format(std::string_view source, const std::string& what) {
  throw FormatError(fmt::format("MXNet graph file '{}': {}", source, what));
}

std::optional<bool> parse_bool(const std::string& s) {
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  return std::nullopt;
}

std::optional<int64_t> parse_int(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.ends_with('L')) s.remove_suffix(1);  // Python 2 longs in old files
  if (s.empty()) return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_float(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// "(3, 3)", "[3, 3]", "(3,)", "()", "3": the integers; nullopt when malformed.
std::optional<Ints> parse_ints(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() >= 2 &&
      ((s.front() == '(' && s.back() == ')') || (s.front() == '[' && s.back() == ']'))) {
    s = s.substr(1, s.size() - 2);
  } else if (auto v = parse_int(s)) {
    return Ints{*v};
  } else {
    return std::nullopt;
  }
  Ints out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    if (comma == std::string_view::npos || !item.empty()) {
      const auto v = parse_int(item);
      if (!v) {
        if (comma != std::string_view::npos || item.find_first_not_of(' ') != item.npos)
          return std::nullopt;
        break;
      }
      out.push_back(*v);
    }
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}
}  // namespace mxnet

namespace {

using nlohmann::json;
using namespace mxnet;

// The parsed document with its top-level fields checked.
json parse_document(std::string_view text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw_format(source, fmt::format("not valid JSON ({})", e.what()));
  }
  if (!doc.is_object()) throw_format(source, "expected a JSON object at the top");
  if (!doc.contains("nodes") || !doc["nodes"].is_array()) {
    throw_format(source, "field 'nodes' must be a list");
  }
  if (!doc.contains("heads") || !doc["heads"].is_array()) {
    throw_format(source, "field 'heads' must be a list");
  }
  return doc;
}

// [node, output] or [node, output, version] naming an output of an earlier node.
std::pair<size_t, size_t> entry_of(const json& j, size_t before, std::string_view what,
                                   std::string_view source) {
  if (!j.is_array() || j.size() < 2 || j.size() > 3 || !j[0].is_number_unsigned() ||
      !j[1].is_number_unsigned()) {
    throw_format(source, fmt::format("{} must be [node, output, version] of non-negative "
                                     "integers, got {}",
                                     what, j.dump()));
  }
  const auto node = j[0].get<uint64_t>();
  if (node >= before) {
    throw_format(source, fmt::format("{} refers to node {}, but only {} nodes come before it", what,
                                     node, before));
  }
  return {static_cast<size_t>(node), static_cast<size_t>(j[1].get<uint64_t>())};
}

std::map<std::string, std::string> attrs_of(const json& jn, std::string_view name,
                                            std::string_view source) {
  std::map<std::string, std::string> out;
  for (const char* key : {"attrs", "attr", "param"}) {  // MXNet 1.x, 0.9, and older
    if (!jn.contains(key)) continue;
    if (!jn[key].is_object()) {
      throw_format(source, fmt::format("'{}' of node '{}' must be an object", key, name));
    }
    for (const auto& [k, v] : jn[key].items()) {
      if (!v.is_string()) {
        throw_format(source, fmt::format("attribute {} of node '{}' must be a string, got {}", k,
                                         name, v.dump()));
      }
      out[k] = v.get<std::string>();
    }
  }
  return out;
}

// A variable, with the shape and dtype that MXNet recorded when they are fully known (legacy
// files write unknown extents as 0, numpy-mode ones as -1).
Symbol variable(const std::string& name, const std::map<std::string, std::string>& attrs,
                bool numpy) {
  const auto shape_it = attrs.find("__shape__");
  if (shape_it == attrs.end()) return Symbol::var(name);
  const auto dims = parse_ints(shape_it->second);
  if (!dims || dims->empty()) return Symbol::var(name);
  for (int64_t d : *dims) {
    if (d < 0 || (d == 0 && !numpy)) return Symbol::var(name);
  }
  DType dtype = DType::kFloat32;
  if (const auto it = attrs.find("__dtype__"); it != attrs.end()) {
    const auto flag = parse_int(it->second);
    static const std::map<int64_t, DType> kFlags = {{0, DType::kFloat32}, {1, DType::kFloat64},
                                                    {2, DType::kFloat16}, {3, DType::kUInt8},
                                                    {4, DType::kInt32},   {6, DType::kInt64}};
    if (!flag || !kFlags.contains(*flag)) return Symbol::var(name);
    dtype = kFlags.at(*flag);
  }
  return Symbol::var(name, Shape(*dims), dtype);
}

}  // namespace

bool is_mxnet_json(std::string_view text) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.contains("nodes") && doc.contains("heads") &&
         !doc.contains("format");
}

Symbol mxnet_symbol_from_json(std::string_view text, std::string_view source) {
  const json doc = parse_document(text, source);
  bool numpy = false;
  if (doc.contains("attrs") && doc["attrs"].is_object() && doc["attrs"].contains("is_np_shape")) {
    const json& v = doc["attrs"]["is_np_shape"];
    numpy = v.is_array() && v.size() == 2 && v[1].is_number_integer() && v[1].get<int64_t>() != 0;
  }
  const json& nodes = doc["nodes"];
  std::vector<Outputs> outputs;  // per MXNet node
  std::vector<std::string> names;
  std::set<std::string> variable_names;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const json& jn = nodes[k];
    if (!jn.is_object() || !jn.contains("name") || !jn["name"].is_string() || !jn.contains("op") ||
        !jn["op"].is_string()) {
      throw_format(source, fmt::format("node {} must be an object with string fields 'op' and "
                                       "'name'",
                                       k));
    }
    const std::string name = jn["name"].get<std::string>();
    const std::string op = jn["op"].get<std::string>();
    if (name.empty()) throw_format(source, fmt::format("node {} has an empty name", k));
    auto attrs = attrs_of(jn, name, source);
    names.push_back(name);
    if (op == "null") {
      if (!variable_names.insert(name).second) {
        throw_format(source, fmt::format("variable name '{}' appears twice", name));
      }
      outputs.push_back({variable(name, attrs, numpy)});
      continue;
    }
    const Converter* convert = find_converter(op);
    if (convert == nullptr) {
      throw_format(source, fmt::format("node '{}' uses the operator '{}', which the MXNet "
                                       "importer does not support",
                                       name, op));
    }
    std::vector<Symbol> inputs;
    if (!jn.contains("inputs") || !jn["inputs"].is_array()) {
      throw_format(source, fmt::format("node '{}' has no list 'inputs'", name));
    }
    for (size_t i = 0; i < jn["inputs"].size(); ++i) {
      const auto [from, index] =
          entry_of(jn["inputs"][i], k, fmt::format("input {} of node '{}'", i, name), source);
      if (index >= outputs[from].size()) {
        throw_format(source, fmt::format("input {} of node '{}' refers to output {} of node '{}', "
                                         "which has {}",
                                         i, name, index, names[from], outputs[from].size()));
      }
      inputs.push_back(outputs[from][index]);
    }
    Call call(source, name, op, std::move(attrs), std::move(inputs));
    outputs.push_back((*convert)(call));
    call.check_all_read();
  }
  if (doc.contains("arg_nodes")) {
    if (!doc["arg_nodes"].is_array()) throw_format(source, "field 'arg_nodes' must be a list");
    for (const json& a : doc["arg_nodes"]) {
      if (!a.is_number_unsigned() || a.get<uint64_t>() >= nodes.size() ||
          nodes[a.get<size_t>()]["op"] != "null") {
        throw_format(source,
                     fmt::format("arg_nodes lists {}, which is not a variable node", a.dump()));
      }
    }
  }
  std::vector<Symbol> heads;
  for (size_t i = 0; i < doc["heads"].size(); ++i) {
    const auto [from, index] =
        entry_of(doc["heads"][i], nodes.size(), fmt::format("head {}", i), source);
    if (index >= outputs[from].size()) {
      throw_format(source, fmt::format("head {} refers to output {} of node '{}', which has {}", i,
                                       index, names[from], outputs[from].size()));
    }
    heads.push_back(outputs[from][index]);
  }
  if (heads.empty()) throw_format(source, "the graph has no heads (outputs)");
  return Symbol::group(heads);
}

}  // namespace janus::graph