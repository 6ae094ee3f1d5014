// ONNX export: each Janus node becomes one or a few ONNX nodes of opset 13 (a lowering per
// operator, in one table), with the shapes of shape inference at hand.
#include "onnx_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/passes.h"
#include "janus/ops/fused.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "onnx/onnx_pb.h"

namespace janus::interchange {
namespace {

using ops::TensorSpec;

int32_t onnx_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ::onnx::TensorProto::FLOAT;
    case DType::kFloat64:
      return ::onnx::TensorProto::DOUBLE;
    case DType::kFloat16:
      return ::onnx::TensorProto::FLOAT16;
    case DType::kBFloat16:
      return ::onnx::TensorProto::BFLOAT16;
    case DType::kInt32:
      return ::onnx::TensorProto::INT32;
    case DType::kInt64:
      return ::onnx::TensorProto::INT64;
    case DType::kUInt8:
      return ::onnx::TensorProto::UINT8;
    case DType::kBool:
      return ::onnx::TensorProto::BOOL;
  }
  JANUS_THROW(InternalError, "ONNX export: dtype {} has no ONNX type", static_cast<int>(dtype));
}

// The symbolic extent of axis 0 in a model exported with a dynamic batch.
constexpr const char* kBatchDim = "batch";

// `spec` as the type of a graph input or output. With a dynamic batch, `other` is its spec at the
// other batch size (BatchSizes): an extent that differs there is `batch` when it is the batch
// size at both, else unknown (no value).
struct BatchSizes {
  int64_t given, other;
};
void set_type(::onnx::ValueInfoProto& v, const std::string& name, const TensorSpec& spec,
              const TensorSpec* other = nullptr, const BatchSizes* batch = nullptr) {
  v.set_name(name);
  ::onnx::TypeProto_Tensor& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(onnx_dtype(spec.dtype));
  ::onnx::TensorShapeProto& shape = *t.mutable_shape();
  for (int64_t i = 0; i < spec.shape.ndim(); ++i) {
    ::onnx::TensorShapeProto_Dimension& d = *shape.add_dim();
    const int64_t extent = spec.shape[i];
    if (other == nullptr || other->shape[i] == extent) {
      d.set_dim_value(extent);
    } else if (extent == batch->given && other->shape[i] == batch->other) {
      d.set_dim_param(kBatchDim);
    }
  }
}

// Appends ONNX nodes and initializers to one graph, with fresh names for the values that a
// decomposition needs in between.
class Builder {
 public:
  explicit Builder(::onnx::GraphProto& graph) : graph_(graph) {}

  // A name not used before, `base` itself when free.
  std::string unique(const std::string& base) {
    std::string name = base;
    for (int k = 1; !taken_.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
    return name;
  }

  ::onnx::NodeProto& node(std::string_view type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
    ::onnx::NodeProto& n = *graph_.add_node();
    n.set_op_type(std::string(type));
    // Node names have a namespace of their own: the first node of a Janus node takes its name.
    std::string node_name = name;
    for (int k = 1; !node_names_.insert(node_name).second; ++k) {
      node_name = fmt::format("{}_{}", name, k);
    }
    n.set_name(node_name);
    for (const std::string& i : inputs) n.add_input(i);
    for (const std::string& o : outputs) n.add_output(o);
    return n;
  }
  // A node of one output, with a fresh name for it.
  std::string node1(std::string_view type, const std::vector<std::string>& inputs,
                    const std::string& name) {
    const std::string out = unique(fmt::format("{}/{}", name, type));
    node(type, inputs, {out}, name);
    return out;
  }

  std::string initializer(const std::string& name, DType dtype, const Shape& shape,
                          const void* data, size_t nbytes) {
    ::onnx::TensorProto& t = *graph_.add_initializer();
    const std::string unique_name = unique(name);
    t.set_name(unique_name);
    t.set_data_type(onnx_dtype(dtype));
    for (const int64_t d : shape.dims()) t.add_dims(d);
    t.set_raw_data(data, nbytes);  // little-endian, row-major: Janus's layout
    return unique_name;
  }
  std::string initializer(const std::string& name, const NDArray& a) {
    std::vector<char> bytes(a.nbytes());
    if (!bytes.empty()) copy_to_host(a, bytes.data(), a.dtype(), "ONNX export");
    return initializer(name, a.dtype(), a.shape(), bytes.data(), bytes.size());
  }
  // A 1-D int64 tensor (axes, shapes, pads).
  std::string ints(const std::string& name, const std::vector<int64_t>& values) {
    return initializer(name, DType::kInt64, Shape{static_cast<int64_t>(values.size())},
                       values.data(), values.size() * sizeof(int64_t));
  }
  // A 0-d tensor of `dtype` holding `value` converted to it as Janus's scalar operators
  // convert their number.
  std::string scalar(const std::string& name, double value, DType dtype) {
    return initializer(name, full(Shape{}, value, dtype));
  }

 private:
  ::onnx::GraphProto& graph_;
  std::set<std::string> taken_;  // value names
  std::set<std::string> node_names_;
};

void set_int(::onnx::NodeProto& n, const std::string& name, int64_t v) {
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::INT);
  a.set_i(v);
}
void set_float(::onnx::NodeProto& n, const std::string& name, double v) {
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::FLOAT);
  a.set_f(static_cast<float>(v));
}
void set_strings(::onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a.add_strings(x);
}
void set_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::INTS);
  for (const int64_t x : v) a.add_ints(x);
}

// One Janus call to lower: its attributes, the ONNX values of its inputs, and the values that
// it must define for its outputs (those that something reads).
struct Call {
  std::string name;
  const ops::OpDef& op;
  const ops::Attrs& attrs;
  std::vector<std::string> in;
  std::vector<TensorSpec> in_specs;
  std::vector<std::string> out;
  std::vector<TensorSpec> out_specs;
  std::vector<bool> used;
  // With a dynamic batch: the specs of the inputs and outputs at the other batch size (the same
  // as in_specs / out_specs where the batch does not reach); empty with a fixed batch.
  std::vector<TensorSpec> other_in_specs;
  std::vector<TensorSpec> other_out_specs;

  template <typename T>
  const T& attr(std::string_view attr_name) const {
    const int i = op.attr_index(attr_name);
    JANUS_ASSERT(i >= 0, "operator '{}' has no attribute '{}'", op.name, attr_name);
    return attrs.get<T>(static_cast<size_t>(i));
  }
  [[noreturn]] void unsupported(std::string_view why) const {
    JANUS_THROW(NotImplementedError, "ONNX export: node '{}' (operator '{}'): {}", name, op.name,
                why);
  }
};

using Lowering = std::function<void(Builder&, const Call&)>;

// (height, width) from "one for both" or two values.
std::vector<int64_t> pair_of(const std::vector<int64_t>& v, const Call& c, std::string_view attr) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) c.unsupported(fmt::format("{} {} is not one or two values", attr, v));
  return v;
}

int64_t normalized_axis(int64_t axis, int64_t ndim) { return axis < 0 ? axis + ndim : axis; }

// An ONNX operator of the same meaning, inputs and one output.
Lowering same(std::string_view type) {
  return [type](Builder& b, const Call& c) { b.node(type, c.in, {c.out[0]}, c.name); };
}

// The ONNX operator of the activation that fuse_bias_activation put into a product's call
// (Gemm, Conv); "" for none.
std::string_view activation_type(const Call& c) {
  const std::string& activation = c.attr<std::string>("activation");
  if (activation.empty()) return "";
  if (activation == "relu") return "Relu";
  if (activation == "sigmoid") return "Sigmoid";
  if (activation == "tanh") return "Tanh";
  c.unsupported(fmt::format("activation '{}'", activation));
}
// The value that a product writes: `result` (the output), or with an activation, an
// intermediate that the activation's node reads.
std::string product_output(Builder& b, const Call& c, std::string_view type,
                           const std::string& result) {
  if (activation_type(c).empty()) return result;
  return b.unique(fmt::format("{}/{}", c.name, type));
}
// After the product: its activation's node into `result`, when product_output chose an
// intermediate.
void apply_activation(Builder& b, const Call& c, const std::string& product,
                      const std::string& result) {
  if (product != result) b.node(activation_type(c), {product}, {result}, c.name);
}

// rnn: one ONNX LSTM, GRU or RNN node per layer (both directions in one), its W, R and B
// sliced out of the packed parameters with the gates put in ONNX's order (LSTM: i, o, f, c from
// Janus's i, f, c, o; GRU: z, r, h from r, z, n, with linear_before_reset as Janus's GRU), and
// Y [T, D, N, H] brought back to [T, N, D·H] between layers.
void lower_rnn(Builder& b, const Call& c) {
  const std::string& mode = c.attr<std::string>("mode");
  const int64_t hs = c.attr<int64_t>("state_size"), layers = c.attr<int64_t>("num_layers");
  const int64_t dirs = c.attr<bool>("bidirectional") ? 2 : 1;
  const bool lstm = mode == "lstm", gru = mode == "gru";
  const int64_t gates = lstm ? 4 : gru ? 3 : 1;
  const std::vector<int64_t> order = lstm  ? std::vector<int64_t>{0, 3, 1, 2}
                                     : gru ? std::vector<int64_t>{1, 0, 2}
                                           : std::vector<int64_t>{0};
  const Shape& data = c.in_specs[0].shape;
  const Shape& states = c.in_specs[2].shape;
  const int64_t gh = gates * hs;
  auto input_size = [&](int64_t l) { return l == 0 ? data[2] : dirs * hs; };
  int64_t weights = 0;
  for (int64_t l = 0; l < layers; ++l) weights += dirs * gh * (input_size(l) + hs);
  // params[begin, begin + rows·cols) of each gate block in ONNX's order, as [1, G·rows, cols].
  auto gate_blocks = [&](int64_t begin, int64_t cols, const std::string& what) {
    std::vector<std::string> blocks;
    for (const int64_t g : order) {
      const int64_t from = begin + g * hs * cols;
      blocks.push_back(
          b.node1("Slice",
                  {c.in[1], b.ints(what + "/starts", {from}),
                   b.ints(what + "/ends", {from + hs * cols}), b.ints(what + "/axes", {0})},
                  c.name));
    }
    std::string joined = blocks[0];
    if (blocks.size() > 1) {
      ::onnx::NodeProto& cat = b.node("Concat", blocks, {b.unique(what + "/gates")}, c.name);
      set_int(cat, "axis", 0);
      joined = cat.output(0);
    }
    return b.node1("Reshape", {joined, b.ints(what + "/shape", {1, gh, cols})}, c.name);
  };
  auto stack = [&](const std::vector<std::string>& parts, const std::string& what) {
    if (parts.size() == 1) return parts[0];
    ::onnx::NodeProto& cat = b.node("Concat", parts, {b.unique(what)}, c.name);
    set_int(cat, "axis", 0);
    return cat.output(0);
  };
  // The initial states of layer l, [D, N, H]; states of batch 1 expanded to the batch.
  auto initial = [&](int64_t k, int64_t l) {
    const std::string what = fmt::format("{}/l{}_state{}", c.name, l, k);
    std::string s =
        b.node1("Slice",
                {c.in[2], b.ints(what + "/starts", {k, l * dirs}),
                 b.ints(what + "/ends", {k + 1, (l + 1) * dirs}), b.ints(what + "/axes", {0, 1})},
                c.name);
    s = b.node1("Squeeze", {s, b.ints(what + "/squeeze", {0})}, c.name);
    if (states[2] == 1 && data[1] != 1) {
      const std::string shape = b.node1("Shape", {c.in[0]}, c.name);
      const std::string batch = b.node1(
          "Slice", {shape, b.ints(what + "/batch_start", {1}), b.ints(what + "/batch_end", {2})},
          c.name);
      ::onnx::NodeProto& target =
          b.node("Concat", {b.ints(what + "/dirs", {dirs}), batch, b.ints(what + "/hidden", {hs})},
                 {b.unique(what + "/expanded_shape")}, c.name);
      set_int(target, "axis", 0);
      s = b.node1("Expand", {s, target.output(0)}, c.name);
    }
    return s;
  };
  std::string x = c.in[0];
  int64_t offset = 0;
  std::vector<std::string> last_h, last_c;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<std::string> w, r, bias;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string what = fmt::format("{}/l{}d{}", c.name, l, d);
      w.push_back(gate_blocks(offset, input_size(l), what + "_W"));
      offset += gh * input_size(l);
      r.push_back(gate_blocks(offset, hs, what + "_R"));
      offset += gh * hs;
      const int64_t bias_at = weights + (l * dirs + d) * 2 * gh;
      const std::string wb = gate_blocks(bias_at, 1, what + "_Wb");
      const std::string rb = gate_blocks(bias_at + gh, 1, what + "_Rb");
      ::onnx::NodeProto& both = b.node("Concat", {wb, rb}, {b.unique(what + "/B3")}, c.name);
      set_int(both, "axis", 1);
      bias.push_back(
          b.node1("Reshape", {both.output(0), b.ints(what + "/B_shape", {1, 2 * gh})}, c.name));
    }
    const std::string layer = fmt::format("{}/l{}", c.name, l);
    std::vector<std::string> inputs{
        x,  stack(w, layer + "/W"), stack(r, layer + "/R"), stack(bias, layer + "/B"),
        "", initial(0, l)};
    if (lstm) inputs.push_back(initial(1, l));
    const std::string y = b.unique(layer + "/Y"), yh = b.unique(layer + "/Y_h");
    std::vector<std::string> outputs{y, yh};
    if (lstm) outputs.push_back(b.unique(layer + "/Y_c"));
    ::onnx::NodeProto& n = b.node(lstm ? "LSTM" : gru ? "GRU" : "RNN", inputs, outputs, c.name);
    set_int(n, "hidden_size", hs);
    ::onnx::AttributeProto& direction = *n.add_attribute();
    direction.set_name("direction");
    direction.set_type(::onnx::AttributeProto::STRING);
    direction.set_s(dirs == 2 ? "bidirectional" : "forward");
    if (gru) set_int(n, "linear_before_reset", 1);
    if (!lstm && !gru) {
      set_strings(n, "activations",
                  std::vector<std::string>(static_cast<size_t>(dirs),
                                           mode == "rnn_relu" ? "Relu" : "Tanh"));
    }
    last_h.push_back(yh);
    if (lstm) last_c.push_back(outputs[2]);
    // [T, D, N, H] -> [T, N, D, H] -> [T, N, D·H]
    ::onnx::NodeProto& t = b.node("Transpose", {y}, {b.unique(layer + "/Y_tnd")}, c.name);
    set_ints(t, "perm", {0, 2, 1, 3});
    const bool last = l + 1 == layers;
    const std::string next = last ? c.out[0] : b.unique(layer + "/out");
    b.node("Reshape", {t.output(0), b.ints(layer + "/out_shape", {0, 0, -1})}, {next}, c.name);
    x = next;
  }
  if (!c.used[1]) return;
  std::vector<std::string> parts{stack(last_h, c.name + "/h")};
  if (lstm) parts.push_back(stack(last_c, c.name + "/c"));
  for (std::string& p : parts) {
    p = b.node1("Unsqueeze", {p, b.ints(c.name + "/state_axis", {0})}, c.name);
  }
  ::onnx::NodeProto& out = b.node("Concat", parts, {c.out[1]}, c.name);
  set_int(out, "axis", 0);
}

void lower_fully_connected(Builder& b, const Call& c) {
  const std::string out = product_output(b, c, "Gemm", c.out[0]);
  set_int(b.node("Gemm", c.in, {out}, c.name), "transB", 1);
  apply_activation(b, c, out, c.out[0]);
}

// `attr` of a convolution with one value per spatial axis of `weight` (one value repeats).
std::vector<int64_t> per_axis(const Call& c, std::string_view attr, const Shape& weight) {
  const auto& v = c.attr<std::vector<int64_t>>(attr);
  const size_t n = static_cast<size_t>(weight.ndim() - 2);
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n) c.unsupported(fmt::format("{} {} is not one or {} values", attr, v, n));
  return v;
}

// Conv or ConvTranspose with the attributes both share; pads are symmetric.
::onnx::NodeProto& conv_node(Builder& b, const Call& c, std::string_view type,
                             const std::string& out) {
  const Shape& w = c.in_specs[1].shape;
  std::vector<int64_t> kernel, pads = per_axis(c, "padding", w);
  for (int i = 2; i < w.ndim(); ++i) kernel.push_back(w[i]);
  const std::vector<int64_t> begin = pads;
  pads.insert(pads.end(), begin.begin(), begin.end());
  ::onnx::NodeProto& conv = b.node(type, c.in, {out}, c.name);
  set_ints(conv, "kernel_shape", kernel);
  set_ints(conv, "strides", per_axis(c, "stride", w));
  set_ints(conv, "pads", pads);
  set_ints(conv, "dilations", per_axis(c, "dilation", w));
  set_int(conv, "group", c.attr<int64_t>("groups"));
  return conv;
}

// conv1d, conv2d, conv3d: Conv, its activation if any, and with avg_pool_2x2 (the
// fuse_conv_avg_pool pass) an AveragePool of 2x2 windows with stride 2, each step's node.
void lower_conv(Builder& b, const Call& c) {
  const bool pooled = c.attr<bool>("avg_pool_2x2");
  const std::string activated =
      pooled ? b.unique(fmt::format("{}/{}", c.name, activation_type(c).empty() ? "Conv" : "act"))
             : c.out[0];
  const std::string out = product_output(b, c, "Conv", activated);
  conv_node(b, c, "Conv", out);
  apply_activation(b, c, out, activated);
  if (!pooled) return;
  ::onnx::NodeProto& pool = b.node("AveragePool", {activated}, {c.out[0]}, c.name);
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  set_ints(pool, "pads", {0, 0, 0, 0});
}

// conv1d_transpose, conv2d_transpose, conv3d_transpose: the same weight layout [C, O / groups,
// k...] and output extents as ConvTranspose with explicit pads and output_padding.
void lower_conv_transpose(Builder& b, const Call& c) {
  ::onnx::NodeProto& n = conv_node(b, c, "ConvTranspose", c.out[0]);
  set_ints(n, "output_padding", per_axis(c, "output_padding", c.in_specs[1].shape));
}

Lowering pool(std::string_view type) {
  return [type](Builder& b, const Call& c) {
    const auto kernel = pair_of(c.attr<std::vector<int64_t>>("kernel_size"), c, "kernel_size");
    const auto& stride_attr = c.attr<std::vector<int64_t>>("stride");
    const auto stride = stride_attr.empty() ? kernel : pair_of(stride_attr, c, "stride");
    const auto pad = pair_of(c.attr<std::vector<int64_t>>("padding"), c, "padding");
    const bool ceil_mode = c.attr<bool>("ceil_mode");
    if (ceil_mode) {
      // ONNX drops a last window that starts past the input (ONNX Runtime's output is then one
      // shorter); Janus, as MXNet, keeps it as an empty window.
      const Shape& x = c.in_specs[0].shape;
      const Shape& y = c.out_specs[0].shape;
      for (int axis : {0, 1}) {
        const int64_t start = (y[2 + axis] - 1) * stride[axis] - pad[axis];
        if (start >= x[2 + axis]) {
          c.unsupported(fmt::format(
              "in ceil mode its last window along the {} starts at {}, outside the input's {}: "
              "ONNX drops such a window, Janus (as MXNet) keeps it, empty",
              axis == 0 ? "height" : "width", start, x[2 + axis]));
        }
      }
    }
    ::onnx::NodeProto& n = b.node(type, c.in, {c.out[0]}, c.name);
    set_ints(n, "kernel_shape", kernel);
    set_ints(n, "strides", stride);
    set_ints(n, "pads", {pad[0], pad[1], pad[0], pad[1]});
    if (ceil_mode) set_int(n, "ceil_mode", 1);
    if (type == "AveragePool") set_int(n, "count_include_pad", c.attr<bool>("count_include_pad"));
  };
}

void lower_batch_norm(Builder& b, const Call& c) {
  if (c.attr<bool>("training")) {
    c.unsupported("batch statistics in training mode (export a model traced for inference)");
  }
  if (normalized_axis(c.attr<int64_t>("axis"), c.in_specs[0].shape.ndim()) != 1) {
    c.unsupported(fmt::format("channel axis {}, ONNX normalizes axis 1", c.attr<int64_t>("axis")));
  }
  ::onnx::NodeProto& n = b.node("BatchNormalization", c.in, {c.out[0]}, c.name);
  set_float(n, "epsilon", c.attr<double>("eps"));
  // At inference the statistics used are the running ones.
  if (c.used[1]) b.node("Identity", {c.in[3]}, {c.out[1]}, c.name);
  if (c.used[2]) b.node("Identity", {c.in[4]}, {c.out[2]}, c.name);
}

// ONNX's TopK of the first input along the call's axis into `values` and int64 `indices`. It
// keeps equal elements in index order, as Janus's sort, argsort and topk; where NaN goes is the
// runtime's choice.
void top_k(Builder& b, const Call& c, int64_t k, bool largest, const std::string& values,
           const std::string& indices) {
  const int64_t axis = normalized_axis(c.attr<int64_t>("axis"), c.in_specs[0].shape.ndim());
  ::onnx::NodeProto& n =
      b.node("TopK", {c.in[0], b.ints(c.name + "/K", {k})}, {values, indices}, c.name);
  set_int(n, "axis", axis);
  set_int(n, "largest", largest ? 1 : 0);
  set_int(n, "sorted", 1);
}

// TopK's int64 positions as `dtype` into `out`.
void positions_as(Builder& b, const Call& c, const std::string& indices, DType dtype,
                  const std::string& out) {
  if (dtype == DType::kInt64) {
    b.node("Identity", {indices}, {out}, c.name);
  } else {
    set_int(b.node("Cast", {indices}, {out}, c.name), "to", onnx_dtype(dtype));
  }
}

// sort and argsort: a TopK of every element along the axis, whose extent must not follow a
// dynamic batch (K is a constant).
int64_t whole_axis(const Call& c) {
  const int64_t axis = normalized_axis(c.attr<int64_t>("axis"), c.in_specs[0].shape.ndim());
  const int64_t n = c.in_specs[0].shape[static_cast<int>(axis)];
  if (!c.other_in_specs.empty() && c.other_in_specs[0].shape[static_cast<int>(axis)] != n) {
    c.unsupported(
        fmt::format("it orders axis {}, whose extent follows the dynamic batch (export "
                    "with a fixed batch)",
                    axis));
  }
  return n;
}

void lower_sort(Builder& b, const Call& c) {
  top_k(b, c, whole_axis(c), c.attr<bool>("descending"), c.out[0], b.unique(c.name + "/indices"));
}

void lower_argsort(Builder& b, const Call& c) {
  const std::string indices = b.unique(c.name + "/indices");
  top_k(b, c, whole_axis(c), c.attr<bool>("descending"), b.unique(c.name + "/values"), indices);
  positions_as(b, c, indices, c.out_specs[0].dtype, c.out[0]);
}

void lower_topk(Builder& b, const Call& c) {
  const std::string& ret = c.attr<std::string>("ret_typ");
  if (ret == "mask") c.unsupported("ret_typ 'mask' (a scatter of ones) is not mapped");
  const bool values_out = ret == "value" || ret == "both";
  const std::string values = values_out ? c.out[0] : b.unique(c.name + "/values");
  const std::string indices = b.unique(c.name + "/indices");
  top_k(b, c, c.attr<int64_t>("k"), !c.attr<bool>("is_ascend"), values, indices);
  const DType dtype = c.out_specs[1].dtype;
  if (!values_out && c.used[0]) positions_as(b, c, indices, dtype, c.out[0]);
  if (c.used[1]) positions_as(b, c, indices, dtype, c.out[1]);
}

// GatherElements takes int32 or int64 positions (negative from the end, as Janus).
void lower_take_along_axis(Builder& b, const Call& c) {
  std::string indices = c.in[1];
  if (is_floating(c.in_specs[1].dtype)) {
    indices = b.unique(c.name + "/positions");
    set_int(b.node("Cast", {c.in[1]}, {indices}, c.name), "to", onnx_dtype(DType::kInt64));
  }
  set_int(b.node("GatherElements", {c.in[0], indices}, {c.out[0]}, c.name), "axis",
          normalized_axis(c.attr<int64_t>("axis"), c.in_specs[0].shape.ndim()));
}

// searchsorted: each value compared with every element of a (Unsqueeze to [..., 1] against a's
// [n]), the elements before it counted. ONNX's comparisons are false with NaN, so NaN is not
// placed last as in Janus.
void lower_searchsorted(Builder& b, const Call& c) {
  const std::string column = b.node1(
      "Unsqueeze", {c.in[1], b.ints(c.name + "/axes", {c.in_specs[1].shape.ndim()})}, c.name);
  const std::string before =
      b.node1(c.attr<bool>("right") ? "LessOrEqual" : "Less", {c.in[0], column}, c.name);
  std::string counted = b.unique(c.name + "/before");
  set_int(b.node("Cast", {before}, {counted}, c.name), "to", onnx_dtype(DType::kInt64));
  set_int(b.node("ReduceSum", {counted, b.ints(c.name + "/sum_axes", {-1})}, {c.out[0]}, c.name),
          "keepdims", 0);
}

void lower_dropout(Builder& b, const Call& c) {
  if (c.attr<bool>("training")) c.unsupported("dropout in training mode draws random numbers");
  if (c.used[1]) c.unsupported("its mask output is read");
  b.node("Identity", {c.in[0]}, {c.out[0]}, c.name);
}

// reshape and mxnet_reshape: to the shape that shape inference found (MXNet's codes resolved).
// With a dynamic batch, an extent that depends on the batch (it differs at the other batch size)
// is ONNX's 0 (copy the input's extent) where it is the input's extent on the same axis at both
// batch sizes, else -1 (inferred from the size; one such axis at most, or the node is refused).
// The other extents are fixed; an extent of 0 cannot arise (ONNX would read it as "copy").
void lower_reshape(Builder& b, const Call& c) {
  std::vector<int64_t> target = c.out_specs[0].shape.dims();
  if (!c.other_out_specs.empty()) {
    const Shape& in = c.in_specs[0].shape;
    const Shape& other_in = c.other_in_specs[0].shape;
    const Shape& other_out = c.other_out_specs[0].shape;
    std::optional<size_t> inferred;
    for (size_t i = 0; i < target.size(); ++i) {
      const auto axis = static_cast<int64_t>(i);
      if (target[i] == other_out[axis]) continue;
      if (axis < in.ndim() && in[axis] == target[i] && other_in[axis] == other_out[axis]) {
        target[i] = 0;
      } else if (!inferred) {
        inferred = i;
        target[i] = -1;
      } else {
        c.unsupported(fmt::format(
            "with a dynamic batch: output axes {} and {} both depend on the batch size (shape {} "
            "at one batch size, {} at another) and ONNX's Reshape infers one extent only; export "
            "with a fixed batch",
            *inferred, i, c.out_specs[0].shape, other_out));
      }
    }
  }
  b.node("Reshape", {c.in[0], b.ints(c.name + "/shape", target)}, {c.out[0]}, c.name);
}

void lower_transpose(Builder& b, const Call& c) {
  const int64_t ndim = c.in_specs[0].shape.ndim();
  std::vector<int64_t> perm = c.attr<std::vector<int64_t>>("axes");
  if (perm.empty()) {
    for (int64_t i = ndim - 1; i >= 0; --i) perm.push_back(i);
  }
  for (int64_t& a : perm) a = normalized_axis(a, ndim);
  set_ints(b.node("Transpose", c.in, {c.out[0]}, c.name), "perm", perm);
}

// swapaxes: a Transpose whose permutation exchanges the two axes.
void lower_swapaxes(Builder& b, const Call& c) {
  const int64_t ndim = c.in_specs[0].shape.ndim();
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(normalized_axis(c.attr<int64_t>("dim1"), ndim))],
            perm[static_cast<size_t>(normalized_axis(c.attr<int64_t>("dim2"), ndim))]);
  set_ints(b.node("Transpose", c.in, {c.out[0]}, c.name), "perm", perm);
}

Lowering with_axis(std::string_view type) {
  return [type](Builder& b, const Call& c) {
    set_int(b.node(type, c.in, {c.out[0]}, c.name), "axis", c.attr<int64_t>("axis"));
  };
}

// ReduceSum takes its axes as an input since opset 13, the other reductions as an attribute.
Lowering reduce(std::string_view type) {
  return [type](Builder& b, const Call& c) {
    const auto& axes = c.attr<std::vector<int64_t>>("axes");
    std::vector<std::string> in = c.in;
    if (type == "ReduceSum" && !axes.empty()) in.push_back(b.ints(c.name + "/axes", axes));
    ::onnx::NodeProto& n = b.node(type, in, {c.out[0]}, c.name);
    if (type != "ReduceSum" && !axes.empty()) set_ints(n, "axes", axes);
    set_int(n, "keepdims", c.attr<bool>("keepdims"));
  };
}

Lowering arg_reduce(std::string_view type) {
  return [type](Builder& b, const Call& c) {
    ::onnx::NodeProto& n = b.node(type, c.in, {c.out[0]}, c.name);
    set_int(n, "axis", c.attr<int64_t>("axis"));
    set_int(n, "keepdims", c.attr<bool>("keepdims"));
  };
}

// An elementwise operator of an array and a number; `reversed`: number first.
Lowering with_scalar(std::string_view type, bool reversed = false) {
  return [type, reversed](Builder& b, const Call& c) {
    const std::string s =
        b.scalar(c.name + "/scalar", c.attr<double>("scalar"), c.in_specs[0].dtype);
    b.node(type, reversed ? std::vector{s, c.in[0]} : std::vector{c.in[0], s}, {c.out[0]}, c.name);
  };
}

// A comparison: bool, as in Janus; not_equal is Not(Equal).
Lowering compare(std::string_view type, bool negate = false) {
  return [type, negate](Builder& b, const Call& c) {
    if (negate) {
      b.node("Not", {b.node1(type, c.in, c.name)}, {c.out[0]}, c.name);
    } else {
      b.node(type, c.in, {c.out[0]}, c.name);
    }
  };
}

// Unary operators that ONNX lacks, written with the ones it has.
void lower_rsqrt(Builder& b, const Call& c) {
  b.node("Reciprocal", {b.node1("Sqrt", c.in, c.name)}, {c.out[0]}, c.name);
}
void lower_square(Builder& b, const Call& c) {
  b.node("Mul", {c.in[0], c.in[0]}, {c.out[0]}, c.name);
}
void lower_log1p(Builder& b, const Call& c) {
  const std::string one = b.scalar(c.name + "/one", 1, c.in_specs[0].dtype);
  b.node("Log", {b.node1("Add", {c.in[0], one}, c.name)}, {c.out[0]}, c.name);
}
// log2 and log10: the natural logarithm divided by ln 2 or ln 10; expm1: exp(x) - 1; cbrt:
// sign(x) |x|^(1/3), as Pow is nan for a negative base (ONNX has none of them).
void lower_log_base(Builder& b, const Call& c, double ln_base) {
  const std::string base = b.scalar(c.name + "/ln_base", ln_base, c.in_specs[0].dtype);
  b.node("Div", {b.node1("Log", {c.in[0]}, c.name), base}, {c.out[0]}, c.name);
}
void lower_log2(Builder& b, const Call& c) { lower_log_base(b, c, std::numbers::ln2); }
void lower_log10(Builder& b, const Call& c) { lower_log_base(b, c, std::numbers::ln10); }
void lower_cbrt(Builder& b, const Call& c) {
  const std::string third = b.scalar(c.name + "/third", 1.0 / 3.0, c.in_specs[0].dtype);
  const std::string root = b.node1("Pow", {b.node1("Abs", {c.in[0]}, c.name), third}, c.name);
  b.node("Mul", {b.node1("Sign", {c.in[0]}, c.name), root}, {c.out[0]}, c.name);
}
void lower_expm1(Builder& b, const Call& c) {
  const std::string one = b.scalar(c.name + "/one", 1, c.in_specs[0].dtype);
  b.node("Sub", {b.node1("Exp", {c.in[0]}, c.name), one}, {c.out[0]}, c.name);
}
void lower_gelu(Builder& b, const Call& c) {
  const DType t = c.in_specs[0].dtype;
  const std::string scaled =
      b.node1("Div", {c.in[0], b.scalar(c.name + "/sqrt2", std::sqrt(2.0), t)}, c.name);
  const std::string erf = b.node1("Erf", {scaled}, c.name);
  const std::string one_plus = b.node1("Add", {erf, b.scalar(c.name + "/one", 1, t)}, c.name);
  const std::string times_x = b.node1("Mul", {c.in[0], one_plus}, c.name);
  b.node("Mul", {times_x, b.scalar(c.name + "/half", 0.5, t)}, {c.out[0]}, c.name);
}
void lower_leaky_relu(Builder& b, const Call& c) {
  set_float(b.node("LeakyRelu", c.in, {c.out[0]}, c.name), "alpha", c.attr<double>("alpha"));
}
void lower_clip(Builder& b, const Call& c) {
  const DType t = c.in_specs[0].dtype;
  b.node("Clip",
         {c.in[0], b.scalar(c.name + "/min", c.attr<double>("a_min"), t),
          b.scalar(c.name + "/max", c.attr<double>("a_max"), t)},
         {c.out[0]}, c.name);
}
void lower_cast(Builder& b, const Call& c) {
  set_int(b.node("Cast", c.in, {c.out[0]}, c.name), "to", onnx_dtype(c.attr<DType>("dtype")));
}

// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis (LayerNormalization is opset
// 17).
void lower_layer_norm(Builder& b, const Call& c) {
  const std::string& x = c.in[0];
  auto mean_last = [&](const std::string& v) {
    const std::string out = b.unique(c.name + "/ReduceMean");
    ::onnx::NodeProto& n = b.node("ReduceMean", {v}, {out}, c.name);
    set_ints(n, "axes", {-1});
    set_int(n, "keepdims", 1);
    return out;
  };
  const std::string centered = b.node1("Sub", {x, mean_last(x)}, c.name);
  const std::string var = mean_last(b.node1("Mul", {centered, centered}, c.name));
  const std::string eps = b.scalar(c.name + "/eps", c.attr<double>("eps"), c.in_specs[0].dtype);
  const std::string stddev = b.node1("Sqrt", {b.node1("Add", {var, eps}, c.name)}, c.name);
  const std::string normed = b.node1("Div", {centered, stddev}, c.name);
  b.node("Add", {b.node1("Mul", {normed, c.in[1]}, c.name), c.in[2]}, {c.out[0]}, c.name);
}

void lower_expand_dims(Builder& b, const Call& c) {
  b.node("Unsqueeze", {c.in[0], b.ints(c.name + "/axes", {c.attr<int64_t>("axis")})}, {c.out[0]},
         c.name);
}
void lower_squeeze(Builder& b, const Call& c) {
  std::vector<std::string> in = c.in;
  const auto& axes = c.attr<std::vector<int64_t>>("axes");
  if (!axes.empty()) in.push_back(b.ints(c.name + "/axes", axes));
  b.node("Squeeze", in, {c.out[0]}, c.name);
}
void lower_slice(Builder& b, const Call& c) {
  const auto& begin = c.attr<std::vector<int64_t>>("begin");
  const auto& end = c.attr<std::vector<int64_t>>("end");
  std::vector<int64_t> step = c.attr<std::vector<int64_t>>("step");
  if (step.empty()) step.assign(begin.size(), 1);
  std::vector<int64_t> axes(begin.size());
  std::iota(axes.begin(), axes.end(), 0);
  b.node("Slice",
         {c.in[0], b.ints(c.name + "/starts", begin), b.ints(c.name + "/ends", end),
          b.ints(c.name + "/axes", axes), b.ints(c.name + "/steps", step)},
         {c.out[0]}, c.name);
}
void lower_slice_axis(Builder& b, const Call& c) {
  b.node("Slice",
         {c.in[0], b.ints(c.name + "/starts", {c.attr<int64_t>("begin")}),
          b.ints(c.name + "/ends", {c.attr<int64_t>("end")}),
          b.ints(c.name + "/axes", {c.attr<int64_t>("axis")})},
         {c.out[0]}, c.name);
}
// slice_like: a Slice from 0 to like's extents, read at run time (Shape, then Gather of the
// sliced axes), so that a dynamic batch axis stays right.
void lower_slice_like(Builder& b, const Call& c) {
  const int64_t ndim = c.in_specs[0].shape.ndim();
  std::vector<int64_t> axes = c.attr<std::vector<int64_t>>("axes");
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(ndim));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& a : axes) a = normalized_axis(a, ndim);
  const std::string like_shape = b.node1("Shape", {c.in[1]}, c.name);
  const std::string ends =
      b.node1("Gather", {like_shape, b.ints(c.name + "/like_axes", axes)}, c.name);
  b.node("Slice",
         {c.in[0], b.ints(c.name + "/starts", std::vector<int64_t>(axes.size(), 0)), ends,
          b.ints(c.name + "/axes", axes)},
         {c.out[0]}, c.name);
}
// reshape_like: a Reshape to a shape read at run time: like's Shape, or with axis ranges the
// Concat of x's dims before begin, like's dims in its range and x's dims from end (Slices of the
// two Shapes; an empty part is left out).
void lower_reshape_like(Builder& b, const Call& c) {
  auto range = [&](const char* attr, int64_t ndim) {
    const auto axes = c.attr<std::vector<int64_t>>(attr);
    return std::pair{axes.empty() ? 0 : normalized_axis(axes[0], ndim),
                     axes.size() < 2 ? ndim : normalized_axis(axes[1], ndim)};
  };
  const int64_t x_ndim = c.in_specs[0].shape.ndim(), like_ndim = c.in_specs[1].shape.ndim();
  const auto [xb, xe] = range("x_axes", x_ndim);
  const auto [lb, le] = range("like_axes", like_ndim);
  if (xb == 0 && xe == x_ndim && lb == 0 && le == like_ndim) {
    b.node("Reshape", {c.in[0], b.node1("Shape", {c.in[1]}, c.name)}, {c.out[0]}, c.name);
    return;
  }
  std::string shapes[2];  // x's and like's Shape, made when a part reads them
  std::vector<std::string> parts;
  auto dims = [&](size_t input, int64_t begin, int64_t end, const char* part) {
    if (begin == end) return;
    if (shapes[input].empty()) shapes[input] = b.node1("Shape", {c.in[input]}, c.name);
    const std::string at = c.name + "/" + part;
    parts.push_back(b.node1(
        "Slice", {shapes[input], b.ints(at + "_starts", {begin}), b.ints(at + "_ends", {end})},
        c.name));
  };
  dims(0, 0, xb, "x_before");
  dims(1, lb, le, "like");
  dims(0, xe, x_ndim, "x_after");
  std::string target;
  if (parts.empty()) {  // a scalar: every part empty
    target = b.ints(c.name + "/scalar", {});
  } else if (parts.size() == 1) {
    target = parts[0];
  } else {
    target = b.unique(c.name + "/Concat");
    set_int(b.node("Concat", parts, {target}, c.name), "axis", 0);
  }
  b.node("Reshape", {c.in[0], target}, {c.out[0]}, c.name);
}
// gather_nd: ONNX's GatherND takes the tuples down the last axis, as int64.
void lower_gather_nd(Builder& b, const Call& c) {
  const int64_t ndim = c.in_specs[1].shape.ndim();
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  std::iota(perm.begin(), perm.end(), 1);
  perm.back() = 0;
  std::string tuples = c.in[1];
  if (c.in_specs[1].dtype != DType::kInt64) {
    tuples = b.unique(c.name + "/Cast");
    set_int(b.node("Cast", {c.in[1]}, {tuples}, c.name), "to", onnx_dtype(DType::kInt64));
  }
  if (ndim > 1) {
    const std::string last = b.unique(c.name + "/Transpose");
    set_ints(b.node("Transpose", {tuples}, {last}, c.name), "perm", perm);
    tuples = last;
  }
  b.node("GatherND", {c.in[0], tuples}, {c.out[0]}, c.name);
}
void lower_broadcast_to(Builder& b, const Call& c) {
  b.node("Expand", {c.in[0], b.ints(c.name + "/shape", c.attr<Shape>("shape").dims())}, {c.out[0]},
         c.name);
}
void lower_pad(Builder& b, const Call& c) {
  const auto& widths = c.attr<std::vector<int64_t>>("widths");  // before0, after0, before1, ...
  // ONNX: every axis's begin, then every axis's end; axes past `widths` are not padded.
  const auto ndim = static_cast<size_t>(c.in_specs[0].shape.ndim());
  std::vector<int64_t> pads(2 * ndim, 0);
  for (size_t i = 0; i < std::min(ndim, widths.size() / 2); ++i) {
    pads[i] = widths[2 * i];
    pads[ndim + i] = widths[2 * i + 1];
  }
  b.node("Pad",
         {c.in[0], b.ints(c.name + "/pads", pads),
          b.scalar(c.name + "/value", c.attr<double>("value"), c.in_specs[0].dtype)},
         {c.out[0]}, c.name);
}
void lower_stack(Builder& b, const Call& c) {
  const int64_t axis = c.attr<int64_t>("axis");
  std::vector<std::string> parts;
  for (const std::string& x : c.in) {
    parts.push_back(b.node1("Unsqueeze", {x, b.ints(c.name + "/axes", {axis})}, c.name));
  }
  set_int(b.node("Concat", parts, {c.out[0]}, c.name), "axis", axis);
}
void lower_where(Builder& b, const Call& c) {
  std::string cond = c.in[0];
  if (c.in_specs[0].dtype != DType::kBool) {
    cond = b.unique(c.name + "/Cast");
    set_int(b.node("Cast", {c.in[0]}, {cond}, c.name), "to", ::onnx::TensorProto::BOOL);
  }
  b.node("Where", {cond, c.in[1], c.in[2]}, {c.out[0]}, c.name);
}
void lower_embedding(Builder& b, const Call& c) {
  b.node("Gather", {c.in[1], c.in[0]}, {c.out[0]}, c.name);
}
void lower_one_hot(Builder& b, const Call& c) {
  // values: [off, on] in the output's dtype.
  const std::string values =
      b.initializer(c.name + "/values", arange(0, 2, 1, c.attr<DType>("dtype")));
  const std::string depth = b.ints(c.name + "/depth", {c.attr<int64_t>("depth")});
  set_int(b.node("OneHot", {c.in[0], depth, values}, {c.out[0]}, c.name), "axis", -1);
}

// The per-sample loss: SoftmaxCrossEntropyLoss without reduction (its second output, the log
// probabilities, is not needed).
void lower_softmax_cross_entropy(Builder& b, const Call& c) {
  ::onnx::NodeProto& n = b.node("SoftmaxCrossEntropyLoss", c.in, {c.out[0]}, c.name);
  ::onnx::AttributeProto& reduction = *n.add_attribute();
  reduction.set_name("reduction");
  reduction.set_type(::onnx::AttributeProto::STRING);
  reduction.set_s("none");
}

void lower_dot(Builder& b, const Call& c) {
  ::onnx::NodeProto& n = b.node("Gemm", c.in, {c.out[0]}, c.name);
  set_int(n, "transA", c.attr<bool>("transpose_a"));
  set_int(n, "transB", c.attr<bool>("transpose_b"));
}
void lower_matmul(Builder& b, const Call& c) {
  std::vector<std::string> in = c.in;
  const char* flags[] = {"transpose_a", "transpose_b"};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t ndim = c.in_specs[i].shape.ndim();
    if (!c.attr<bool>(flags[i]) || ndim < 2) continue;
    std::vector<int64_t> perm(static_cast<size_t>(ndim));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    const std::string t = b.unique(c.name + "/Transpose");
    set_ints(b.node("Transpose", {in[i]}, {t}, c.name), "perm", perm);
    in[i] = t;
  }
  b.node("MatMul", in, {c.out[0]}, c.name);
}

const std::unordered_map<std::string_view, Lowering>& lowerings();

// The steps of the program, each lowered like the operator it names.
void lower_fused(Builder& b, const Call& c) {
  const std::vector<ops::FusedStep> steps =
      ops::decode_fused_program(c.attr<std::string>("program"));
  std::vector<std::string> results;
  std::vector<TensorSpec> result_specs;
  for (size_t k = 0; k < steps.size(); ++k) {
    const ops::FusedStep& s = steps[k];
    std::vector<std::string> in;
    std::vector<TensorSpec> in_specs;
    for (const int i : s.inputs) {
      const size_t at = static_cast<size_t>(i >= 0 ? i : -1 - i);
      in.push_back(i >= 0 ? c.in.at(at) : results.at(at));
      in_specs.push_back(i >= 0 ? c.in_specs.at(at) : result_specs.at(at));
    }
    ops::Attrs attrs = s.attrs;
    ops::complete_attrs(*s.op, attrs);
    const std::vector<TensorSpec> out_specs = s.op->infer(ops::InferArgs{*s.op, in_specs, attrs});
    const bool last = k + 1 == steps.size();
    const std::string step_name = fmt::format("{}/{}{}", c.name, s.op->name, k);
    const std::string out = last ? c.out[0] : b.unique(step_name);
    const auto it = lowerings().find(s.op->name);
    if (it == lowerings().end()) {
      c.unsupported(
          fmt::format("step {} of its program, '{}', has no ONNX equivalent", k, s.op->name));
    }
    it->second(b, Call{step_name, *s.op, attrs, in, in_specs, {out}, out_specs, {true}, {}, {}});
    results.push_back(out);
    result_specs.push_back(out_specs.at(0));
  }
}

const std::unordered_map<std::string_view, Lowering>& lowerings() {
  static const auto* table = new std::unordered_map<std::string_view, Lowering>{
      {"fully_connected", lower_fully_connected},
      {"rnn", lower_rnn},
      {"conv1d", lower_conv},
      {"conv2d", lower_conv},
      {"conv3d", lower_conv},
      {"conv1d_transpose", lower_conv_transpose},
      {"conv2d_transpose", lower_conv_transpose},
      {"conv3d_transpose", lower_conv_transpose},
      {"max_pool2d", pool("MaxPool")},
      {"avg_pool2d", pool("AveragePool")},
      {"batch_norm", lower_batch_norm},
      {"dropout", lower_dropout},
      {"sort", lower_sort},
      {"argsort", lower_argsort},
      {"topk", lower_topk},
      {"take_along_axis", lower_take_along_axis},
      {"searchsorted", lower_searchsorted},
      {"layer_norm", lower_layer_norm},
      {"softmax", with_axis("Softmax")},
      {"log_softmax", with_axis("LogSoftmax")},
      {"softmax_cross_entropy", lower_softmax_cross_entropy},
      {"flatten",
       [](Builder& b, const Call& c) {
         set_int(b.node("Flatten", c.in, {c.out[0]}, c.name), "axis", 1);
       }},
      {"reshape", lower_reshape},
      {"mxnet_reshape", lower_reshape},
      {"transpose", lower_transpose},
      {"swapaxes", lower_swapaxes},
      {"concat", with_axis("Concat")},
      {"stack", lower_stack},
      {"expand_dims", lower_expand_dims},
      {"squeeze", lower_squeeze},
      {"slice", lower_slice},
      {"slice_axis", lower_slice_axis},
      {"broadcast_to", lower_broadcast_to},
      {"pad", lower_pad},
      {"take", with_axis("Gather")},
      {"gather_nd", lower_gather_nd},
      {"slice_like", lower_slice_like},
      {"reshape_like", lower_reshape_like},
      {"embedding", lower_embedding},
      {"one_hot", lower_one_hot},
      {"where", lower_where},
      {"dot", lower_dot},
      {"matmul", lower_matmul},
      {"cast", lower_cast},
      {"copyto", same("Identity")},
      {"sum", reduce("ReduceSum")},
      {"mean", reduce("ReduceMean")},
      {"max", reduce("ReduceMax")},
      {"min", reduce("ReduceMin")},
      {"prod", reduce("ReduceProd")},
      {"logsumexp", reduce("ReduceLogSumExp")},
      {"norm", reduce("ReduceL2")},
      {"argmax", arg_reduce("ArgMax")},
      {"argmin", arg_reduce("ArgMin")},
      {"add", same("Add")},
      {"subtract", same("Sub")},
      {"mul", same("Mul")},
      {"divide", same("Div")},
      {"maximum", same("Max")},
      {"minimum", same("Min")},
      {"power", same("Pow")},
      {"fmod", [](Builder& b,
                  const Call& c) { set_int(b.node("Mod", c.in, {c.out[0]}, c.name), "fmod", 1); }},
      // ONNX's Mod takes the divisor's sign (fmod = 0) for integers only. For floats: the
      // remainder r of fmod, plus b where r is nonzero and its sign differs from b's, as the
      // kernel computes it (a zero remainder keeps a's sign of zero there, not b's).
      {"mod",
       [](Builder& b, const Call& c) {
         if (!is_floating(c.in_specs[0].dtype)) {
           set_int(b.node("Mod", c.in, {c.out[0]}, c.name), "fmod", 0);
           return;
         }
         const std::string r = b.unique(c.name + "/fmod");
         set_int(b.node("Mod", c.in, {r}, c.name), "fmod", 1);
         const std::string zero = b.scalar(c.name + "/zero", 0.0, c.in_specs[0].dtype);
         const std::string signs_differ = b.node1(
             "Xor", {b.node1("Less", {r, zero}, c.name), b.node1("Less", {c.in[1], zero}, c.name)},
             c.name);
         const std::string nonzero = b.node1("Not", {b.node1("Equal", {r, zero}, c.name)}, c.name);
         const std::string shift = b.node1("And", {signs_differ, nonzero}, c.name);
         b.node("Where", {shift, b.node1("Add", {r, c.in[1]}, c.name), r}, {c.out[0]}, c.name);
       }},
      {"add_scalar", with_scalar("Add")},
      {"subtract_scalar", with_scalar("Sub")},
      {"rsubtract_scalar", with_scalar("Sub", true)},
      {"mul_scalar", with_scalar("Mul")},
      {"divide_scalar", with_scalar("Div")},
      {"rdivide_scalar", with_scalar("Div", true)},
      {"power_scalar", with_scalar("Pow")},
      {"rpower_scalar", with_scalar("Pow", true)},
      {"maximum_scalar", with_scalar("Max")},
      {"minimum_scalar", with_scalar("Min")},
      {"equal", compare("Equal")},
      {"not_equal", compare("Equal", true)},
      {"greater", compare("Greater")},
      {"greater_equal", compare("GreaterOrEqual")},
      {"less", compare("Less")},
      {"less_equal", compare("LessOrEqual")},
      {"relu", same("Relu")},
      {"sigmoid", same("Sigmoid")},
      {"tanh", same("Tanh")},
      {"softplus", same("Softplus")},
      {"exp", same("Exp")},
      {"log", same("Log")},
      {"sqrt", same("Sqrt")},
      {"abs", same("Abs")},
      {"negative", same("Neg")},
      {"sign", same("Sign")},
      {"floor", same("Floor")},
      {"ceil", same("Ceil")},
      {"rint", same("Round")},
      {"stop_gradient", same("Identity")},
      {"sin", same("Sin")},
      {"cos", same("Cos")},
      {"erf", same("Erf")},
      {"rsqrt", lower_rsqrt},
      {"square", lower_square},
      {"log1p", lower_log1p},
      {"log2", lower_log2},
      {"log10", lower_log10},
      {"expm1", lower_expm1},
      {"cbrt", lower_cbrt},
      {"tan", same("Tan")},
      {"arcsin", same("Asin")},
      {"arccos", same("Acos")},
      {"arctan", same("Atan")},
      {"sinh", same("Sinh")},
      {"cosh", same("Cosh")},
      {"arcsinh", same("Asinh")},
      {"arccosh", same("Acosh")},
      {"arctanh", same("Atanh")},
      {"gelu", lower_gelu},
      {"leaky_relu", lower_leaky_relu},
      {"clip", lower_clip},
      {"fused_elementwise", lower_fused},
  };
  return *table;
}

// Why an operator without a lowering cannot be exported.
std::string why_not_exported(const ops::OpDef& op) {
  if (op.random) return "it draws random numbers, which an inference graph cannot reproduce";
  if (!op.mutable_inputs.empty()) return "it updates its inputs in place (a training step)";
  if (op.name.find("_backward") != std::string_view::npos) {
    return "it is a gradient, not part of inference";
  }
  return fmt::format("ONNX (opset {}) has no equivalent operator", kOnnxOpset);
}

using EntryKey = std::pair<const graph::Node*, uint32_t>;

// The specs of the inputs: given, else recorded in the graph.
TensorSpec input_spec(const graph::Node& n, const OnnxExportOptions& o) {
  const auto given = o.input_shapes.find(n.name);
  const DType dtype = n.specs.empty() ? DType::kFloat32 : n.specs[0].dtype;
  if (given != o.input_shapes.end()) return TensorSpec{given->second, dtype, cpu()};
  JANUS_CHECK(!n.specs.empty(), ValueError,
              "ONNX export: '{}' does not record the shape of its input '{}'; give it (janus "
              "convert --shape)",
              o.symbol_file, n.name);
  return TensorSpec{n.specs[0].shape, dtype, cpu()};
}

// The position of `n` in g.nodes (a clone of g holds its copy there).
size_t index_of(const graph::Graph& g, const graph::Node& n) {
  const auto it = std::find_if(g.nodes.begin(), g.nodes.end(),
                               [&](const graph::NodePtr& p) { return p.get() == &n; });
  JANUS_ASSERT(it != g.nodes.end(), "node '{}' is not in the graph", n.name);
  return static_cast<size_t>(it - g.nodes.begin());
}

// The spec at the other batch size of entry `e` of g.
const TensorSpec& other_entry_spec(const graph::Graph& g, const graph::Graph& other,
                                   const graph::NodeEntry& e) {
  return other.nodes[index_of(g, *e.node)]->specs.at(e.index);
}

// Infers the specs of `other` (a clone of the symbol's graph) with the specs of g, whose specs
// are inferred, except that each input's axis 0 is one longer; the batch sizes. The inputs must
// share their axis 0 (the batch); a graph that does not hold at the other batch size is refused
// with shape inference's error, which names the node.
BatchSizes infer_other_batch(const graph::Graph& g, graph::Graph& other,
                             const OnnxExportOptions& o) {
  std::optional<BatchSizes> batch;
  std::string first;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = *g.nodes[i];
    if (!n.is_variable()) continue;
    other.nodes[i]->specs = n.specs;
    const bool input =
        std::find(o.input_names.begin(), o.input_names.end(), n.name) != o.input_names.end() &&
        !n.constant.defined();
    if (!input) continue;
    const Shape& shape = n.specs.at(0).shape;
    JANUS_CHECK(shape.ndim() >= 1, ValueError,
                "ONNX export with a dynamic batch: input '{}' is a scalar, it has no batch axis; "
                "export with a fixed batch (janus convert --fixed-batch)",
                n.name);
    if (!batch) {
      batch = BatchSizes{shape[0], shape[0] + 1};
      first = n.name;
    }
    JANUS_CHECK(shape[0] == batch->given, ValueError,
                "ONNX export with a dynamic batch: inputs '{}' and '{}' have {} and {} rows, "
                "expected one batch size on axis 0; export with a fixed batch (janus convert "
                "--fixed-batch)",
                first, n.name, batch->given, shape[0]);
    std::vector<int64_t> dims = shape.dims();
    dims[0] = batch->other;
    other.nodes[i]->specs[0].shape = Shape(dims);
  }
  JANUS_CHECK(batch.has_value(), ValueError,
              "ONNX export with a dynamic batch: the graph has no input");
  try {
    graph::infer_specs(other);
  } catch (Error& e) {
    e.add_context(fmt::format(
        "ONNX export with a dynamic batch: the graph '{}' does not hold at batch size {} (it was "
        "given {}), so it fixes its batch size; export with a fixed batch (janus convert "
        "--fixed-batch)",
        o.symbol_file, batch->other, batch->given));
    throw;
  }
  return *batch;
}

}  // namespace

std::string export_onnx(const graph::Symbol& symbol, const graph::NamedArrays& params,
                        const OnnxExportOptions& o) {
  const graph::ArgumentBinding binding = graph::bind_arguments(
      symbol.list_arguments(), o.input_names, fmt::format("ONNX export ('{}')", o.symbol_file));
  const std::vector<NDArray> values =
      graph::bind_parameters(symbol, binding, params, "ONNX export", o.symbol_file, o.params_file);
  std::unordered_map<std::string, NDArray> value_of;
  for (size_t k = 0; k < values.size(); ++k) value_of[binding.parameter_names[k]] = values[k];

  graph::Graph g = symbol.graph().clone();
  for (const graph::NodePtr& n : g.nodes) {
    if (!n->is_variable() || n->constant.defined()) continue;
    const auto v = value_of.find(n->name);
    n->specs = {v != value_of.end() ? TensorSpec{v->second.shape(), v->second.dtype(), cpu()}
                                    : input_spec(*n, o)};
  }
  graph::infer_specs(g);
  // With a dynamic batch, the same graph with every input's axis 0 one longer: what depends on
  // the batch size differs between the two, and a graph that fixes its batch size fails here.
  std::optional<BatchSizes> batch;
  graph::Graph other = symbol.graph().clone();
  if (o.dynamic_batch) batch = infer_other_batch(g, other, o);

  ::onnx::ModelProto model;
  model.set_ir_version(::onnx::IR_VERSION);
  model.set_producer_name("janus");
  ::onnx::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  ::onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name("janus");
  Builder b(gp);

  // Values by entry: variables under their names, graph outputs under list_outputs' names.
  std::map<EntryKey, std::string> names;
  for (const std::string& name : o.input_names) {
    for (const graph::NodePtr& n : g.nodes) {
      if (n->is_variable() && n->name == name && !value_of.contains(name)) {
        const TensorSpec* at_other = batch ? &other.nodes[index_of(g, *n)]->specs[0] : nullptr;
        set_type(*gp.add_input(), b.unique(name), n->specs[0], at_other, batch ? &*batch : nullptr);
        names[{n.get(), 0}] = name;
      }
    }
  }
  for (const graph::NodePtr& n : g.nodes) {
    if (!n->is_variable() || names.contains({n.get(), 0})) continue;
    const auto v = value_of.find(n->name);
    names[{n.get(), 0}] = b.initializer(n->name, n->constant.defined() ? n->constant : v->second);
  }
  const std::vector<std::string> output_names = symbol.list_outputs();
  std::vector<std::string> outputs;  // the ONNX output names
  std::vector<bool> needs_identity;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const EntryKey key{g.outputs[k].node.get(), g.outputs[k].index};
    outputs.push_back(b.unique(output_names.at(k)));
    const bool own = !key.first->is_variable() && !names.contains(key);
    if (own) names[key] = outputs.back();
    needs_identity.push_back(!own);
  }
  std::set<EntryKey> read;
  for (const graph::NodePtr& n : g.nodes) {
    for (const graph::NodeEntry& e : n->inputs) read.insert({e.node.get(), e.index});
  }
  for (const graph::NodeEntry& e : g.outputs) read.insert({e.node.get(), e.index});

  for (const graph::NodePtr& n : g.nodes) {
    if (n->is_variable()) continue;
    const ops::OpDef& op = *n->op;
    Call call{n->name, op, n->attrs, {}, {}, {}, n->specs, {}, {}, {}};
    for (const graph::NodeEntry& e : n->inputs) {
      call.in.push_back(names.at({e.node.get(), e.index}));
      call.in_specs.push_back(e.node->specs.at(e.index));
      if (batch) call.other_in_specs.push_back(other_entry_spec(g, other, e));
    }
    if (batch) call.other_out_specs = other.nodes[index_of(g, *n)]->specs;
    for (uint32_t i = 0; i < n->num_outputs(); ++i) {
      const EntryKey key{n.get(), i};
      if (!names.contains(key)) {
        names[key] = b.unique(n->num_outputs() == 1 ? n->name
                                                    : fmt::format("{}_{}", n->name, op.outputs[i]));
      }
      call.out.push_back(names[key]);
      call.used.push_back(read.contains(key));
    }
    const auto lowering = lowerings().find(op.name);
    if (lowering != lowerings().end()) {
      try {
        lowering->second(b, call);
      } catch (const NotImplementedError&) {
        throw;  // names the node already
      } catch (Error& e) {
        e.add_context(fmt::format("ONNX export: node '{}' (operator '{}')", n->name, op.name));
        throw;
      }
    } else if (op.inputs.empty() && !op.random) {
      // A creation operator (zeros, arange, ...): its value, computed once, is a constant.
      const std::vector<NDArray> made = ops::invoke(op, {}, n->attrs);
      for (size_t i = 0; i < made.size(); ++i) {
        if (call.used[i])
          b.node("Identity", {b.initializer(n->name, made[i])}, {call.out[i]}, n->name);
      }
    } else {
      JANUS_THROW(NotImplementedError,
                  "ONNX export: node '{}' (operator '{}') cannot be exported: {}", n->name, op.name,
                  why_not_exported(op));
    }
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const graph::NodeEntry& e = g.outputs[k];
    if (needs_identity[k]) {
      b.node("Identity", {names.at({e.node.get(), e.index})}, {outputs[k]}, outputs[k]);
    }
    const TensorSpec* at_other = batch ? &other_entry_spec(g, other, e) : nullptr;
    set_type(*gp.add_output(), outputs[k], e.node->specs.at(e.index), at_other,
             batch ? &*batch : nullptr);
  }
  return model.SerializeAsString();
}

std::vector<std::string> onnx_mapped_operators() {
  std::vector<std::string> names;
  for (const auto& [name, lowering] : lowerings()) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void save_onnx(const std::string& path, const graph::Symbol& symbol,
               const graph::NamedArrays& params, const OnnxExportOptions& options) {
  const std::string bytes = export_onnx(symbol, params, options);
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  JANUS_CHECK(out.is_open(), IOError, "ONNX export: cannot write '{}': {}", path,
              std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  std::error_code ec;
  if (!out) {
    std::filesystem::remove(tmp, ec);
    JANUS_THROW(IOError, "ONNX export: writing '{}' failed (disk full?)", path);
  }
  std::filesystem::rename(tmp, path, ec);
  JANUS_CHECK(!ec, IOError, "ONNX export: cannot write '{}': {}", path, ec.message());
}

}  // namespace janus::interchange
