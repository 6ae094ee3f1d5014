// Tracer: the TraceHook that turns operator calls on placeholders into graph nodes.
#include "janus/graph/trace.h"

#include "janus/base/error.h"
#include "janus/engine/array.h"

namespace janus::graph {

Tracer::Tracer(ParamResolver resolver) : resolver_(std::move(resolver)) {}

NDArray Tracer::input(std::string name, const ops::TensorSpec& spec) {
  NDArray ph = placeholder(spec.shape, spec.dtype, spec.device);
  auto node = std::make_shared<Node>();
  node->name = std::move(name);
  node->specs = {spec};
  placeholders_[ph.storage().get()] = NodeEntry{std::move(node), 0};
  return ph;
}

const NodePtr& Tracer::input_node(const NDArray& placeholder) const {
  auto it =
      placeholder.defined() ? placeholders_.find(placeholder.storage().get()) : placeholders_.end();
  JANUS_CHECK(it != placeholders_.end() && it->second.node->is_variable(), ValueError,
              "tracing: input_node: the array is not an input placeholder of this trace");
  return it->second.node;
}

// The entry that holds `a`'s value. A view made by NDArray::reshape of a traced value (same
// storage, other shape) becomes a reshape node; other views cannot be traced.
NodeEntry Tracer::entry_of(const NDArray& a, std::string_view user) {
  const Storage* storage = a.storage().get();
  NodeEntry e;
  if (a.is_placeholder()) {
    auto it = placeholders_.find(storage);
    JANUS_CHECK(it != placeholders_.end(), TraceError,
                "{}: an input (shape {}) is a placeholder of another trace; a traced forward may "
                "only use its own inputs, parameters and arrays it creates",
                user, a.shape());
    e = it->second;
  } else {
    auto it = real_.find(storage);
    if (it == real_.end()) {
      auto node = std::make_shared<Node>();
      std::optional<std::string> name = resolver_ ? resolver_(a) : std::nullopt;
      // The whole storage, as its owner sees it: a view of it is rebuilt below.
      if (name) {
        node->name = *name;
        node->specs = {ops::TensorSpec{a.shape(), a.dtype(), a.device()}};
        JANUS_CHECK(a.offset_bytes() == 0, TraceError,
                    "{}: parameter '{}' is used through a view with an offset; use the slice "
                    "operator instead of NDArray::slice in a traced forward",
                    user, *name);
      } else {
        node->name = fmt::format("_const{}", constants_++);
        node->constant = a;
        node->specs = {ops::TensorSpec{a.shape(), a.dtype(), a.device()}};
      }
      it = real_.emplace(storage, std::move(node)).first;
    }
    e = NodeEntry{it->second, 0};
  }
  const ops::TensorSpec& spec = e.node->specs.at(e.index);
  if (spec.shape == a.shape() && a.offset_bytes() == 0) return e;
  JANUS_CHECK(a.offset_bytes() == 0 && a.size() == spec.shape.numel() && a.dtype() == spec.dtype,
              TraceError,
              "{}: an input (shape {}) is a view made by NDArray::slice or at() of a traced value "
              "(shape {}); in a traced forward use the slice operator, which the graph records",
              user, a.shape(), spec.shape);
  // NDArray::reshape made this view without calling an operator: record the reshape.
  ops::Attrs attrs{a.shape()};
  const ops::OpDef& reshape = ops::get_op("reshape");
  ops::complete_attrs(reshape, attrs);
  auto node = std::make_shared<Node>();
  node->op = &reshape;
  node->name = unique_name("reshape");
  node->attrs = std::move(attrs);
  node->inputs = {e};
  node->specs = {ops::TensorSpec{a.shape(), a.dtype(), a.device()}};
  ++recorded_;
  return NodeEntry{std::move(node), 0};
}

std::vector<NDArray> Tracer::on_trace(const ops::OpDef& op, std::span<const NDArray> inputs,
                                      const ops::Attrs& attrs,
                                      std::span<const ops::TensorSpec> outputs) {
  JANUS_CHECK(!op.copy_lane && !op.multi_device, NotImplementedError,
              "tracing: operator '{}' moves data between devices; a hybridized forward runs on "
              "one device (copy the inputs before calling the block)",
              op.name);
  auto node = std::make_shared<Node>();
  node->op = &op;
  node->name = unique_name(op.name);
  node->attrs = attrs;
  for (const NDArray& x : inputs) node->inputs.push_back(entry_of(x, op.name));
  node->specs.assign(outputs.begin(), outputs.end());
  std::vector<NDArray> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    NDArray ph = placeholder(outputs[i].shape, outputs[i].dtype, outputs[i].device);
    placeholders_[ph.storage().get()] = NodeEntry{node, static_cast<uint32_t>(i)};
    out.push_back(std::move(ph));
  }
  ++recorded_;
  return out;
}

Symbol Tracer::finish(std::span<const NDArray> outputs) {
  std::vector<NodeEntry> entries;
  for (const NDArray& y : outputs) {
    JANUS_CHECK(y.defined(), ValueError, "tracing: an output of the forward is undefined");
    entries.push_back(entry_of(y, "tracing (an output)"));
  }
  return Symbol(std::move(entries));
}

}  // namespace janus::graph
