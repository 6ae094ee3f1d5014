// Symbol::tojson / fromjson: the graph file format (docs/graph-format.md).
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"
#include "janus/graph/symbol.h"

namespace janus::graph {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "janus.graph";
constexpr int kVersion = 1;

json attr_to_json(const ops::AttrValue& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Shape>) {
          return x.dims();
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(x));
        } else if constexpr (std::is_same_v<T, Device>) {
          return to_string(x);
        } else {
          return x;
        }
      },
      v);
}

// Reads one file while remembering where it is, so every error names the file and the node.
struct Reader {
  std::string_view source;

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw FormatError(
        fmt::format("graph file '{}': {}", source, fmt::format(f, std::forward<Args>(args)...)));
  }

  std::vector<int64_t> ints(const json& j, std::string_view what) const {
    if (!j.is_array()) fail("{} must be a list of integers, got {}", what, j.type_name());
    std::vector<int64_t> out;
    for (const json& x : j) {
      if (!x.is_number_integer())
        fail("{} must be a list of integers, got an element {}", what, x.dump());
      out.push_back(x.get<int64_t>());
    }
    return out;
  }

  ops::AttrValue attr(const json& j, const ops::AttrDef& def, std::string_view node) const {
    const std::string what = fmt::format("attribute '{}' of node '{}'", def.name, node);
    try {
      switch (def.type) {
        case ops::AttrType::kInt:
          if (j.is_number_integer()) return j.get<int64_t>();
          break;
        case ops::AttrType::kFloat:
          if (j.is_number()) return j.get<double>();
          break;
        case ops::AttrType::kBool:
          if (j.is_boolean()) return j.get<bool>();
          break;
        case ops::AttrType::kString:
          if (j.is_string()) return j.get<std::string>();
          break;
        case ops::AttrType::kInts:
          return ints(j, what);
        case ops::AttrType::kShape:
          return Shape(ints(j, what));
        case ops::AttrType::kDType:
          if (j.is_string()) return parse_dtype(j.get<std::string>());
          break;
        case ops::AttrType::kDevice:
          if (j.is_string()) return parse_device(j.get<std::string>());
          break;
      }
    } catch (const FormatError&) {
      throw;
    } catch (const std::exception& e) {
      fail("{}: {}", what, e.what());
    }
    fail("{} must be of type {}, got {}", what, ops::attr_type_name(def.type), j.dump());
  }

  // The document, with its header (format, version) and top-level fields checked.
  json parse(std::string_view text) const {
    json doc;
    try {
      doc = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
      fail("not valid JSON ({})", e.what());
    }
    if (!doc.is_object()) fail("expected a JSON object at the top, got {}", doc.type_name());
    if (!doc.contains("format") || doc["format"] != kFormat) {
      fail("field 'format' must be \"{}\"", kFormat);
    }
    if (!doc.contains("version") || !doc["version"].is_number_integer()) {
      fail("field 'version' must be an integer");
    }
    if (doc["version"].get<int64_t>() != kVersion) {
      fail("format version {} is not supported, expected {}", doc["version"].get<int64_t>(),
           kVersion);
    }
    if (!doc.contains("nodes") || !doc["nodes"].is_array()) fail("field 'nodes' must be a list");
    if (!doc.contains("outputs") || !doc["outputs"].is_array()) {
      fail("field 'outputs' must be a list");
    }
    return doc;
  }

  // A pair [node, output] naming an output of one of the nodes read so far.
  NodeEntry entry(const json& j, std::string_view what, const std::vector<NodePtr>& nodes) const {
    if (!j.is_array() || j.size() != 2 || !j[0].is_number_unsigned() ||
        !j[1].is_number_unsigned()) {
      fail("{} must be a pair [node, output] of non-negative integers, got {}", what, j.dump());
    }
    const auto node = j[0].get<uint64_t>();
    const auto index = j[1].get<uint64_t>();
    if (node >= nodes.size()) {
      fail("{} refers to node {}, but only {} nodes come before it", what, node, nodes.size());
    }
    if (index >= nodes[node]->num_outputs()) {
      fail("{} refers to output {} of node '{}', which has {}", what, index, nodes[node]->name,
           nodes[node]->num_outputs());
    }
    return NodeEntry{nodes[node], static_cast<uint32_t>(index)};
  }

  // A variable's declared shape and dtype, when it has them.
  void read_variable(const json& jn, Node& n) const {
    if (!jn.contains("shape")) return;
    DType dtype = DType::kFloat32;
    if (jn.contains("dtype")) {
      if (!jn["dtype"].is_string()) fail("dtype of variable '{}' must be a string", n.name);
      try {
        dtype = parse_dtype(jn["dtype"].get<std::string>());
      } catch (const Error& e) {
        fail("variable '{}': {}", n.name, e.what());
      }
    }
    const auto dims = ints(jn["shape"], fmt::format("shape of variable '{}'", n.name));
    for (int64_t d : dims) {
      if (d < 0) fail("shape of variable '{}' has a negative extent {}", n.name, d);
    }
    n.specs.push_back(ops::TensorSpec{Shape(dims), dtype, cpu()});
  }

  // An operator node's attributes: every one known, the required ones present, defaults filled.
  void read_attrs(const json& jn, Node& n) const {
    const json empty_obj = json::object();
    const json& ja = jn.contains("attrs") ? jn["attrs"] : empty_obj;
    if (!ja.is_object()) fail("'attrs' of node '{}' must be an object", n.name);
    for (const auto& [key, value] : ja.items()) {
      if (n.op->attr_index(key) < 0) {
        fail("node '{}' ({}) has an unknown attribute '{}'", n.name, n.op->name, key);
      }
    }
    for (const ops::AttrDef& def : n.op->attrs) {
      const std::string key(def.name);
      if (ja.contains(key)) {
        n.attrs.values().push_back(attr(ja[key], def, n.name));
      } else if (def.default_value) {
        n.attrs.values().push_back(*def.default_value);
      } else {
        fail("node '{}' ({}) lacks the required attribute '{}'", n.name, n.op->name, key);
      }
    }
    try {
      ops::complete_attrs(*n.op, n.attrs);
    } catch (const Error& e) {
      fail("node '{}': {}", n.name, e.what());
    }
  }

  // An operator node: its operator, attributes and inputs (outputs of the nodes before it).
  void read_operator(const json& jn, Node& n, const std::vector<NodePtr>& nodes) const {
    if (!jn["op"].is_string()) fail("'op' of node '{}' must be a string or null", n.name);
    const std::string op_name = jn["op"].get<std::string>();
    n.op = ops::find_op(op_name);
    if (n.op == nullptr) {
      fail("node '{}' calls operator '{}', which this build of Janus does not have", n.name,
           op_name);
    }
    read_attrs(jn, n);
    if (!jn.contains("inputs") || !jn["inputs"].is_array()) {
      fail("node '{}' has no list 'inputs'", n.name);
    }
    if (!n.op->accepts_inputs(jn["inputs"].size())) {
      fail("node '{}' ({}) has {} inputs, the operator takes {}", n.name, op_name,
           jn["inputs"].size(), n.op->inputs.size());
    }
    for (size_t i = 0; i < jn["inputs"].size(); ++i) {
      n.inputs.push_back(
          entry(jn["inputs"][i], fmt::format("input {} of node '{}'", i, n.name), nodes));
    }
  }
};

}  // namespace

std::string Symbol::tojson() const {
  const Graph g = graph();
  std::unordered_map<const Node*, size_t> id;
  json nodes = json::array();
  for (const NodePtr& n : g.nodes) {
    json jn;
    jn["name"] = n->name;
    if (n->is_variable()) {
      jn["op"] = nullptr;
      if (!n->specs.empty()) {
        jn["shape"] = n->specs[0].shape.dims();
        jn["dtype"] = std::string(dtype_name(n->specs[0].dtype));
      }
      if (n->constant.defined()) jn["constant"] = true;
    } else {
      jn["op"] = std::string(n->op->name);
      json attrs = json::object();
      for (size_t i = 0; i < n->op->attrs.size(); ++i) {
        attrs[std::string(n->op->attrs[i].name)] = attr_to_json(n->attrs.values().at(i));
      }
      jn["attrs"] = std::move(attrs);
      json inputs = json::array();
      for (const NodeEntry& e : n->inputs) inputs.push_back({id.at(e.node.get()), e.index});
      jn["inputs"] = std::move(inputs);
    }
    id[n.get()] = nodes.size();
    nodes.push_back(std::move(jn));
  }
  json outputs = json::array();
  for (const NodeEntry& e : g.outputs) outputs.push_back({id.at(e.node.get()), e.index});
  json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["nodes"] = std::move(nodes);
  doc["outputs"] = std::move(outputs);
  return doc.dump(1);
}

Symbol Symbol::fromjson(std::string_view text, std::string_view source) {
  const Reader r{source};
  const json doc = r.parse(text);
  std::vector<NodePtr> nodes;
  std::unordered_set<std::string> variable_names;
  for (size_t k = 0; k < doc["nodes"].size(); ++k) {
    const json& jn = doc["nodes"][k];
    if (!jn.is_object()) r.fail("node {} must be an object", k);
    if (!jn.contains("name") || !jn["name"].is_string()) r.fail("node {} has no string 'name'", k);
    auto n = std::make_shared<Node>();
    n->name = jn["name"].get<std::string>();
    if (n->name.empty()) r.fail("node {} has an empty name", k);
    if (!jn.contains("op")) r.fail("node '{}' has no field 'op'", n->name);
    if (jn["op"].is_null()) {
      if (!variable_names.insert(n->name).second) {
        r.fail("variable name '{}' appears twice", n->name);
      }
      r.read_variable(jn, *n);
    } else {
      r.read_operator(jn, *n, nodes);
    }
    nodes.push_back(std::move(n));
  }
  std::vector<NodeEntry> outputs;
  for (size_t i = 0; i < doc["outputs"].size(); ++i) {
    outputs.push_back(r.entry(doc["outputs"][i], fmt::format("output {}", i), nodes));
  }
  if (outputs.empty()) r.fail("the graph has no outputs");
  return Symbol(std::move(outputs));
}

void Symbol::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  JANUS_CHECK(out.good(), IOError, "Symbol::save: cannot open '{}' for writing", path);
  out << tojson();
  out.close();
  JANUS_CHECK(!out.fail(), IOError, "Symbol::save: writing '{}' failed", path);
}

Symbol Symbol::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  JANUS_CHECK(in.good(), IOError, "cannot open '{}' for reading", path);
  std::ostringstream text;
  text << in.rdbuf();
  JANUS_CHECK(!in.bad(), IOError, "Symbol::load: reading '{}' failed", path);
  return fromjson(text.str(), path);
}

}  // namespace janus::graph
