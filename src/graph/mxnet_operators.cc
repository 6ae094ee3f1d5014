// The MXNet operators that the graph reader maps: one converter per operator builds the Janus
// operators that compute it at inference, in the table at the end (legacy and numpy-mode names
// side by side). The JSON's structure is read in mxnet_json.cc.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "janus/ops/ops.h"

#include "mxnet_operators_impl.h"

namespace janus::graph::mxnet {
namespace {

bool produces_matrix(const Symbol& s) {
  const Node& n = *s.outputs()[0].node;
  return !n.is_variable() && (n.op->name == "fully_connected" || n.op->name == "flatten");
}

Outputs fully_connected(Call& c) {
  const int64_t hidden = c.integer("num_hidden");
  const bool no_bias = c.boolean("no_bias", false);
  const bool flatten = c.boolean("flatten", true);
  const auto& in = c.inputs(no_bias ? 2 : 3, no_bias ? 2 : 3);
  if (!flatten) {
    // x [..., K] · wᵀ [K, M] -> [..., M]
    Symbol y = c.janus("matmul", {in[0], in[1]}, {{"transpose_b", true}}, no_bias ? "" : "_matmul");
    return {no_bias ? y : c.janus("add", {y, in[2]})};
  }
  const Symbol x = produces_matrix(in[0]) ? in[0] : c.janus("flatten", {in[0]}, {}, "_flatten");
  const Symbol b = no_bias ? c.zeros_constant(hidden, "_zero_bias") : in[2];
  return {c.janus("fully_connected", {x, in[1], b})};
}

// The number of spatial axes of a convolution, from its kernel (1 to 3).
size_t conv_dims(Call& c) {
  const Ints kernel = c.ints("kernel");  // the weight's shape holds the extents
  if (kernel.empty() || kernel.size() > 3) {
    c.fail("attribute kernel = ({}), expected 1 to 3 values", fmt::join(kernel, ", "));
  }
  static const char* kLayouts[] = {"NCW", "NCHW", "NCDHW"};
  c.require("layout", {kLayouts[kernel.size() - 1]});
  c.ignore({"workspace", "cudnn_tune", "cudnn_off"});
  return kernel.size();
}

// Convolution over 1 to 3 spatial axes: conv1d, conv2d, conv3d.
Outputs convolution(Call& c) {
  const size_t dims = conv_dims(c);
  const Ints stride = c.spatial("stride", dims, 1);
  const Ints pad = c.spatial("pad", dims, 0);
  const Ints dilate = c.spatial("dilate", dims, 1);
  const int64_t filters = c.integer("num_filter");
  const int64_t groups = c.integer("num_group", 1);
  const bool no_bias = c.boolean("no_bias", false);
  const auto& in = c.inputs(no_bias ? 2 : 3, no_bias ? 2 : 3);
  const Symbol b = no_bias ? c.zeros_constant(filters, "_zero_bias") : in[2];
  return {
      c.janus(fmt::format("conv{}d", dims), {in[0], in[1], b},
              {{"stride", stride}, {"padding", pad}, {"dilation", dilate}, {"groups", groups}})};
}

// Deconvolution (1 to 3 spatial axes): conv1d_transpose, ... with adj as output_padding. Its
// bias is off unless no_bias is False (MXNet's default is True).
Outputs deconvolution(Call& c) {
  const size_t dims = conv_dims(c);
  const Ints stride = c.spatial("stride", dims, 1);
  const Ints pad = c.spatial("pad", dims, 0);
  const Ints adj = c.spatial("adj", dims, 0);
  const Ints dilate = c.spatial("dilate", dims, 1);
  if (!c.ints("target_shape", Ints{}).empty()) {
    c.fail("target_shape is not supported (give pad and adj instead)");
  }
  const int64_t filters = c.integer("num_filter");
  const int64_t groups = c.integer("num_group", 1);
  const bool no_bias = c.boolean("no_bias", true);
  const auto& in = c.inputs(no_bias ? 2 : 3, no_bias ? 2 : 3);
  const Symbol b = no_bias ? c.zeros_constant(filters, "_zero_bias") : in[2];
  return {c.janus(fmt::format("conv{}d_transpose", dims), {in[0], in[1], b},
                  {{"stride", stride},
                   {"padding", pad},
                   {"dilation", dilate},
                   {"groups", groups},
                   {"output_padding", adj}})};
}

// softsign: x / (1 + |x|).
Symbol softsign_of(const Call& c, const Symbol& x) {
  const Symbol d =
      c.janus("add_scalar", {c.janus("abs", {x}, {}, "_abs")}, {{"scalar", 1.0}}, "_denominator");
  return c.janus("divide", {x, d});
}

Outputs activation(Call& c) {
  static const std::map<std::string, std::string_view> kOps = {
      {"relu", "relu"}, {"sigmoid", "sigmoid"}, {"tanh", "tanh"}, {"softrelu", "softplus"}};
  const std::string type = c.str("act_type", "");
  if (type == "softsign") return {softsign_of(c, c.inputs(1, 1)[0])};
  const auto it = kOps.find(type);
  if (it == kOps.end())
    c.fail("act_type '{}' is not supported (relu, sigmoid, tanh, softrelu, softsign)", type);
  return {c.janus(it->second, {c.inputs(1, 1)[0]})};
}

Outputs leaky_relu(Call& c) {
  const std::string type = c.str("act_type", "leaky");
  const double slope = c.real("slope", 0.25);
  c.ignore({"lower_bound", "upper_bound"});  // rrelu's, at training
  const auto& in = c.inputs(1, 1);
  if (type == "leaky") return {c.janus("leaky_relu", {in[0]}, {{"alpha", slope}})};
  if (type == "gelu") return {c.janus("gelu", {in[0]})};
  c.fail("act_type '{}' is not supported (leaky, gelu)", type);
}

Outputs pooling(Call& c) {
  const std::string type = c.str("pool_type", "max");
  if (type != "max" && type != "avg") c.fail("pool_type '{}' is not supported (max, avg)", type);
  const bool global = c.boolean("global_pool", false);
  const std::string convention = c.str("pooling_convention", "valid");
  const bool include_pad = c.boolean("count_include_pad", true);
  c.require("layout", {"NCHW"});
  c.ignore({"cudnn_off", "p_value"});
  const auto& in = c.inputs(1, 1);
  if (global) {
    c.ignore({"kernel", "stride", "pad"});  // MXNet ignores them too
    return {c.janus(type == "max" ? "max" : "mean", {in[0]},
                    {{"axes", Ints{2, 3}}, {"keepdims", true}})};
  }
  const Ints kernel = c.pair("kernel", {});
  const Ints stride = c.pair("stride", {1, 1});
  const Ints pad = c.pair("pad", {0, 0});
  if (convention != "valid" && convention != "full") {
    c.fail("pooling_convention '{}' is not supported (valid, full)", convention);
  }
  // "full" rounds the output extent up: Janus's ceil_mode, whose windows (clipped at the
  // padding, empty past the input) are MXNet's.
  NamedAttrs attrs = {{"kernel_size", kernel},
                      {"stride", stride},
                      {"padding", pad},
                      {"ceil_mode", convention == "full"}};
  if (type == "avg") attrs.emplace_back("count_include_pad", include_pad);
  return {c.janus(type == "max" ? "max_pool2d" : "avg_pool2d", {in[0]}, attrs)};
}

Outputs batch_norm(Call& c) {
  const double eps = c.real("eps", 1e-3);
  const bool fix_gamma = c.boolean("fix_gamma", true);
  const int64_t axis = c.integer("axis", 1);
  c.require("output_mean_var", {"False", "0"});
  c.ignore({"momentum", "use_global_stats", "cudnn_off", "min_calib_range", "max_calib_range",
            "ndev", "key"});  // ndev, key: SyncBatchNorm's
  const auto& in = c.inputs(5, 5);
  Symbol gamma = in[1];
  if (fix_gamma) {
    // MXNet reads gamma as 1 (whatever the file holds); gamma * 0 + 1 keeps its shape.
    gamma = c.janus("add_scalar", {c.janus("mul_scalar", {in[1]}, {{"scalar", 0.0}}, "_gamma0")},
                    {{"scalar", 1.0}}, "_gamma1");
  }
  const Symbol y = c.janus("batch_norm", {in[0], gamma, in[2], in[3], in[4]},
                           {{"eps", eps}, {"training", false}, {"axis", axis}});
  return {y[0], y[1], y[2]};
}

Outputs identity(Call& c) {
  c.ignore({"p", "mode", "axes", "cudnn_off"});  // Dropout's
  return {c.inputs(1, 1)[0]};
}

Converter unary(std::string_view op) {
  return [op](Call& c) -> Outputs { return {c.janus(op, {c.inputs(1, 1)[0]})}; };
}

Converter binary(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const auto& in = c.inputs(2, 2);
    return {c.janus(op, {in[0], in[1]})};
  };
}

Converter scalar(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const double s = c.real("scalar");
    c.ignore({"is_int"});
    return {c.janus(op, {c.inputs(1, 1)[0]}, {{"scalar", s}})};
  };
}

Outputs add_n(Call& c) {
  c.ignore({"num_args"});
  const auto& in = c.inputs(1, std::numeric_limits<size_t>::max());
  Symbol y = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    y = c.janus("add", {y, in[i]}, {}, i + 1 == in.size() ? "" : fmt::format("_{}", i));
  }
  return {y};
}

// Concat (dim, default 1) and numpy's concatenate (axis, default 0), as pairwise concats.
Converter concat(std::string key, int64_t fallback) {
  return [key, fallback](Call& c) -> Outputs {
    const int64_t axis = c.integer(key, fallback);
    c.ignore({"num_args"});
    const auto& in = c.inputs(1, std::numeric_limits<size_t>::max());
    Symbol y = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      y = c.janus("concat", {y, in[i]}, {{"axis", axis}},
                  i + 1 == in.size() ? "" : fmt::format("_{}", i));
    }
    return {y};
  };
}

// A target of positive extents and at most one -1 is an ordinary reshape (reverse or not).
Outputs reshape_to(Call& c, const Symbol& x, const Ints& codes, bool reverse = false) {
  const bool plain = std::ranges::all_of(codes, [](int64_t v) { return v > 0 || v == -1; }) &&
                     std::ranges::count(codes, -1) <= 1;
  if (plain) return {c.janus("reshape", {x}, {{"shape", Shape(codes)}})};
  return {c.janus("mxnet_reshape", {x}, {{"shape", codes}, {"reverse", reverse}})};
}

Outputs reshape(Call& c) {
  c.inputs(1, 1);
  const Ints codes = c.ints("shape", Ints{});
  const bool reverse = c.boolean("reverse", false);
  c.require("target_shape", {"()", "(0,)"});
  c.require("keep_highest", {"False", "0"});
  if (codes.empty()) c.fail("has no target shape");
  return reshape_to(c, c.input(0), codes, reverse);
}

Outputs np_reshape(Call& c) {
  c.inputs(1, 1);
  const Ints shape = c.ints("newshape");
  c.require("order", {"C"});
  for (int64_t v : shape) {
    if (v < -1)
      c.fail("newshape ({}) has the code {}, expected extents or -1", fmt::join(shape, ", "), v);
  }
  return reshape_to(c, c.input(0), shape);
}

// npx.reshape's codes, in MXNet's legacy codes: -2 copies one axis (0), -4 copies the rest
// (-2), -5 merges two (-3), -6 splits one (-4). -3 drops an input axis of extent 1 (what
// integer indexing leaves): those axes are squeezed first, then the other codes apply, each
// consuming the input axes it consumed before.
Outputs npx_reshape(Call& c) {
  Symbol x = c.inputs(1, 1)[0];
  const Ints shape = c.ints("newshape");
  c.require("reverse", {"False", "0"});
  c.require("order", {"C"});
  Ints codes, dropped;
  int64_t source = 0;  // the input axis that the next code consumes
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t v = shape[i];
    switch (v) {
      case -1:
        codes.push_back(-1);
        ++source;
        break;
      case -2:
        codes.push_back(0);
        ++source;
        break;
      case -3:
        dropped.push_back(source++);
        break;
      case -4:
        codes.push_back(-2);
        break;
      case -5:
        codes.push_back(-3);
        source += 2;
        break;
      case -6:
        if (i + 2 >= shape.size()) {
          c.fail("newshape ({}) ends in the code -6, which needs two extents after it",
                 fmt::join(shape, ", "));
        }
        codes.insert(codes.end(), {-4, shape[i + 1], shape[i + 2]});
        i += 2;
        ++source;
        break;
      default:
        if (v <= 0)
          c.fail("newshape ({}) has the code {}, which is not supported", fmt::join(shape, ", "),
                 v);
        codes.push_back(v);
        ++source;
    }
  }
  if (!dropped.empty()) x = c.janus("squeeze", {x}, {{"axes", dropped}}, "_dropped");
  return reshape_to(c, x, codes);
}

Outputs transpose(Call& c) {
  const Ints axes = c.ints("axes", Ints{});
  return {c.janus("transpose", {c.inputs(1, 1)[0]}, {{"axes", axes}})};
}

Outputs clip(Call& c) {
  const double lo = c.real("a_min"), hi = c.real("a_max");
  return {c.janus("clip", {c.inputs(1, 1)[0]}, {{"a_min", lo}, {"a_max", hi}})};
}

Converter reduce(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const Ints axes = c.ints("axis", Ints{});
    const bool keepdims = c.boolean("keepdims", false);
    c.require("exclude", {"False", "0"});
    c.require("dtype", {});
    c.require("initial", {});
    return {c.janus(op, {c.inputs(1, 1)[0]}, {{"axes", axes}, {"keepdims", keepdims}})};
  };
}

Converter softmax(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const int64_t axis = c.integer("axis", -1);
    c.require("temperature", {"1", "1.0"});
    c.require("use_length", {"False", "0"});
    c.require("dtype", {"float32"});
    return {c.janus(op, {c.inputs(1, 1)[0]}, {{"axis", axis}})};
  };
}

// SoftmaxOutput and SoftmaxActivation at inference: softmax over the channel axis (1), the
// last axis, or (MXNet's default) all axes but the first, flattened.
Outputs softmax_output(Call& c) {
  const bool multi = c.boolean("multi_output", false);
  const bool preserve = c.boolean("preserve_shape", false);
  c.ignore(
      {"grad_scale", "ignore_label", "use_ignore", "normalization", "out_grad", "smooth_alpha"});
  const Symbol x = c.inputs(1, 2)[0];  // the label, if any, is for training
  if (multi) return {c.janus("softmax", {x}, {{"axis", int64_t{1}}})};
  if (preserve) return {c.janus("softmax", {x}, {{"axis", int64_t{-1}}})};
  const Symbol flat = produces_matrix(x) ? x : c.janus("flatten", {x}, {}, "_flatten");
  return {c.janus("softmax", {flat}, {{"axis", int64_t{1}}})};
}

Outputs softmax_activation(Call& c) {
  const std::string mode = c.str("mode", "instance");
  const Symbol x = c.inputs(1, 1)[0];
  if (mode == "channel") return {c.janus("softmax", {x}, {{"axis", int64_t{1}}})};
  if (mode != "instance") c.fail("mode '{}' is not supported (instance, channel)", mode);
  const Symbol flat = produces_matrix(x) ? x : c.janus("flatten", {x}, {}, "_flatten");
  return {c.janus("softmax", {flat}, {{"axis", int64_t{1}}})};
}

Outputs expand_dims(Call& c) {
  const int64_t axis = c.integer("axis");
  return {c.janus("expand_dims", {c.inputs(1, 1)[0]}, {{"axis", axis}})};
}

Outputs flatten(Call& c) { return {c.janus("flatten", {c.inputs(1, 1)[0]})}; }

// An MXNet dtype attribute ("float32", "int64", ...) among `allowed`; `fallback` when absent.
DType dtype_attr(Call& c, const std::string& key, DType fallback,
                 std::initializer_list<DType> allowed) {
  const auto v = c.raw(key);
  if (!v || *v == "None") return fallback;
  std::optional<DType> dtype;
  try {
    dtype = parse_dtype(*v);
  } catch (const Error&) {
  }
  if (!dtype || std::ranges::find(allowed, *dtype) == allowed.end()) {
    std::vector<std::string_view> names;
    for (DType d : allowed) names.push_back(dtype_name(d));
    c.fail("attribute {} = '{}' is not supported (expected {})", key, *v, fmt::join(names, ", "));
  }
  return *dtype;
}

// The input and axis of the ordering operators: axis None orders the flattened input.
std::pair<Symbol, int64_t> ordered_axis(Call& c) {
  const Symbol x = c.inputs(1, 1)[0];
  const auto axis = c.raw("axis");
  if (axis && *axis == "None") {
    return {c.janus("reshape", {x}, {{"shape", Shape{-1}}}, "_flatten"), 0};
  }
  const auto v = axis ? parse_int(*axis) : std::optional<int64_t>(-1);
  if (!v) c.fail("attribute axis = '{}', expected an integer or None", *axis);
  return {x, *v};
}

const std::initializer_list<DType> kPositionDTypes = {DType::kFloat32, DType::kFloat64,
                                                      DType::kInt32, DType::kInt64};

// sort and argsort: MXNet's is_ascend (default True) is Janus's descending turned round;
// argsort's positions are float32 unless dtype says otherwise.
Outputs sort(Call& c) {
  const auto [x, axis] = ordered_axis(c);
  const bool ascend = c.boolean("is_ascend", true);
  return {c.janus("sort", {x}, {{"axis", axis}, {"descending", !ascend}})};
}

Outputs argsort(Call& c) {
  const auto [x, axis] = ordered_axis(c);
  const bool ascend = c.boolean("is_ascend", true);
  const DType dtype = dtype_attr(c, "dtype", DType::kFloat32, kPositionDTypes);
  return {c.janus("argsort", {x}, {{"axis", axis}, {"descending", !ascend}, {"dtype", dtype}})};
}

// topk: MXNet shows one output (what ret_typ names), or two for 'both' (values, positions).
Outputs topk(Call& c) {
  const auto [x, axis] = ordered_axis(c);
  const int64_t k = c.integer("k", 1);
  if (k < 1) c.fail("attribute k = {} (a sort of the whole axis) is not supported (k >= 1)", k);
  const std::string ret = c.str("ret_typ", "indices");
  if (ret != "value" && ret != "indices" && ret != "mask" && ret != "both") {
    c.fail("ret_typ '{}' is not supported (value, indices, mask, both)", ret);
  }
  const bool ascend = c.boolean("is_ascend", false);
  const DType dtype = dtype_attr(c, "dtype", DType::kFloat32, kPositionDTypes);
  const Symbol y = c.janus(
      "topk", {x},
      {{"axis", axis}, {"k", k}, {"ret_typ", ret}, {"is_ascend", ascend}, {"dtype", dtype}});
  if (ret == "both") return {y[0], y[1]};
  return {y[0]};
}

// The training heads at inference: MakeLoss passes its input on, the regression outputs their
// prediction (a sigmoid for the logistic one); the label, if given, is for training.
Outputs make_loss(Call& c) {
  c.ignore({"grad_scale", "valid_thresh", "normalization"});
  return {c.inputs(1, 1)[0]};
}

Converter regression_output(std::string_view op) {
  return [op](Call& c) -> Outputs {
    c.ignore({"grad_scale"});
    const Symbol x = c.inputs(1, 2)[0];
    return {op.empty() ? x : c.janus(op, {x})};
  };
}

Symbol with_scalar(const Call& c, std::string_view op, const Symbol& x, double s,
                   std::string_view suffix) {
  return c.janus(op, {x}, {{"scalar", s}}, suffix);
}

// A constant of this node (suffix names it) holding `value`.
Symbol constant(const Call& c, NDArray value, std::string_view suffix) {
  Symbol s = Symbol::var(c.name() + std::string(suffix), value.shape(), value.dtype());
  s.outputs()[0].node->constant = std::move(value);
  return s;
}

// x's axes reversed (transpose without axes): a per-sample [N] or per-(sample, channel)
// [N, C] array reversed broadcasts against the last axes of the result, whatever x's rank.
Symbol reversed(const Call& c, const Symbol& x, std::string_view suffix) {
  return c.janus("transpose", {x}, {}, suffix);
}

// L2Normalization: x / sqrt(sum(x^2) + eps), the sum over every axis but the first
// ('instance'), over axis 1 ('channel') or over the axes after 1 ('spatial').
Outputs l2_normalization(Call& c) {
  const double eps = c.real("eps", 1e-10);
  const std::string mode = c.str("mode", "instance");
  const Symbol x = c.inputs(1, 1)[0];
  const auto root = [&](const Symbol& s) {
    return c.janus("sqrt", {with_scalar(c, "add_scalar", s, eps, "_eps")}, {}, "_norm");
  };
  if (mode == "channel") {
    const Symbol s = c.janus("sum", {c.janus("square", {x}, {}, "_sq")},
                             {{"axes", Ints{1}}, {"keepdims", true}}, "_sum");
    return {c.janus("divide", {x, root(s)})};
  }
  if (mode != "instance" && mode != "spatial") {
    c.fail("mode '{}' is not supported (instance, channel, spatial)", mode);
  }
  const bool spatial = mode == "spatial";
  const Symbol rows =
      c.janus("mxnet_reshape", {x},
              {{"shape", spatial ? Ints{0, 0, -1} : Ints{0, -1}}, {"reverse", false}}, "_rows");
  const Symbol s = c.janus("sum", {c.janus("square", {rows}, {}, "_sq")},
                           {{"axes", Ints{spatial ? 2 : 1}}, {"keepdims", false}}, "_sum");
  const Symbol n = spatial ? reversed(c, root(s), "_norm_t") : root(s);
  return {reversed(c, c.janus("divide", {reversed(c, x, "_xt"), n}, {}, "_yt"), "")};
}

// InstanceNorm: each (sample, channel) normalized over the axes after 1 (biased variance),
// then gamma and beta per channel. The statistics ([N, C]) and gamma, beta ([C, 1]) meet x with
// its axes reversed ([..., C, N]).
Outputs instance_norm(Call& c) {
  const double eps = c.real("eps", 1e-3);
  const auto& in = c.inputs(3, 3);
  const Symbol rows =
      c.janus("mxnet_reshape", {in[0]}, {{"shape", Ints{0, 0, -1}}, {"reverse", false}}, "_rows");
  const Symbol mean = c.janus("mean", {rows}, {{"axes", Ints{2}}, {"keepdims", true}}, "_mean");
  const Symbol centred = c.janus("subtract", {rows, mean}, {}, "_centred");
  const Symbol var = c.janus("mean", {c.janus("square", {centred}, {}, "_sq")},
                             {{"axes", Ints{2}}, {"keepdims", false}}, "_var");
  const Symbol sd = c.janus("sqrt", {with_scalar(c, "add_scalar", var, eps, "_eps")}, {}, "_sd");
  const Symbol mean_t =
      reversed(c, c.janus("squeeze", {mean}, {{"axes", Ints{2}}}, "_mean2"), "_mean_t");
  const Symbol gamma = c.janus("reshape", {in[1]}, {{"shape", Shape{-1, 1}}}, "_gamma");
  const Symbol beta = c.janus("reshape", {in[2]}, {{"shape", Shape{-1, 1}}}, "_beta");
  Symbol y = c.janus("subtract", {reversed(c, in[0], "_xt"), mean_t}, {}, "_xc");
  y = c.janus("divide", {y, reversed(c, sd, "_sd_t")}, {}, "_xn");
  y = c.janus("add", {c.janus("mul", {y, gamma}, {}, "_scaled"), beta}, {}, "_yt");
  return {reversed(c, y, "")};
}

Symbol mxnet_reshape(const Call& c, const Symbol& x, Ints codes, bool reverse,
                     std::string_view suffix) {
  return c.janus("mxnet_reshape", {x}, {{"shape", std::move(codes)}, {"reverse", reverse}}, suffix);
}

// GroupNorm (MXNet 1.9: gamma and beta per group): the channels in num_groups groups, each
// normalized per sample over its channels and the axes after. The statistics come from the
// rows [N, G, C/G * ...]; x viewed as [N, G, C/G, ...] meets them ([N, G]) and gamma, beta
// ([G, 1]) with its axes reversed, and merges G and C/G back.
Outputs group_norm(Call& c) {
  const int64_t groups = c.integer("num_groups", 1);
  const double eps = c.real("eps", 1e-5);
  c.require("output_mean_var", {"False", "0"});
  if (groups < 1) c.fail("attribute num_groups = {}, expected a positive count", groups);
  const auto& in = c.inputs(3, 3);
  const Symbol rows = mxnet_reshape(c, in[0], {0, groups, -1}, false, "_rows");
  const Symbol mean = c.janus("mean", {rows}, {{"axes", Ints{2}}, {"keepdims", true}}, "_mean");
  const Symbol centred = c.janus("subtract", {rows, mean}, {}, "_centred");
  const Symbol var = c.janus("mean", {c.janus("square", {centred}, {}, "_sq")},
                             {{"axes", Ints{2}}, {"keepdims", false}}, "_var");
  const Symbol sd = c.janus("sqrt", {with_scalar(c, "add_scalar", var, eps, "_eps")}, {}, "_sd");
  const Symbol mean_t =
      reversed(c, c.janus("squeeze", {mean}, {{"axes", Ints{2}}}, "_mean2"), "_mean_t");
  const Symbol gamma = c.janus("reshape", {in[1]}, {{"shape", Shape{-1, 1}}}, "_gamma");
  const Symbol beta = c.janus("reshape", {in[2]}, {{"shape", Shape{-1, 1}}}, "_beta");
  const Symbol split = mxnet_reshape(c, in[0], {0, -4, groups, -1, -2}, false, "_split");
  Symbol y = c.janus("subtract", {reversed(c, split, "_xt"), mean_t}, {}, "_xc");
  y = c.janus("divide", {y, reversed(c, sd, "_sd_t")}, {}, "_xn");
  y = c.janus("add", {c.janus("mul", {y, gamma}, {}, "_scaled"), beta}, {}, "_yt");
  return {mxnet_reshape(c, reversed(c, y, "_y"), {0, -3, -2}, false, "")};
}

// LayerNorm over the last axis (Janus's layer_norm); another axis would need the rank.
Outputs layer_norm(Call& c) {
  const int64_t axis = c.integer("axis", -1);
  const double eps = c.real("eps", 1e-5);
  c.require("output_mean_var", {"False", "0"});
  if (axis != -1) c.fail("attribute axis = {} is not supported (expected -1, the last axis)", axis);
  const auto& in = c.inputs(3, 3);
  return {c.janus("layer_norm", {in[0], in[1], in[2]}, {{"eps", eps}})};
}

// smooth_l1 with sigma = scalar: 0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2.
// With m = min(|x|, 1/sigma^2) both are 0.5 sigma^2 m^2 + (|x| - m).
Outputs smooth_l1(Call& c) {
  const double sigma = c.real("scalar", 1.0);
  if (!(sigma > 0)) c.fail("attribute scalar = {}, expected a positive sigma", sigma);
  const double s2 = sigma * sigma;
  const Symbol a = c.janus("abs", {c.inputs(1, 1)[0]}, {}, "_abs");
  const Symbol m = with_scalar(c, "minimum_scalar", a, 1.0 / s2, "_min");
  const Symbol quad =
      with_scalar(c, "mul_scalar", c.janus("square", {m}, {}, "_sq"), 0.5 * s2, "_quad");
  return {c.janus("add", {quad, c.janus("subtract", {a, m}, {}, "_lin")})};
}

// norm: ord 1 is sum(|x|), ord 2 Janus's norm; over every axis (axis None) the legacy operator
// gives shape (1,), numpy-mode linalg.norm (_npi_norm) a scalar.
Converter norm(bool numpy) {
  return [numpy](Call& c) -> Outputs {
    const int64_t ord = c.integer("ord", 2);
    const Ints axes = c.ints("axis", Ints{});
    const bool keepdims = c.boolean("keepdims", false);
    c.require("out_dtype", {});
    if (numpy) {
      // linalg.norm's flags: -2 (neither ord nor axis) and 1 (no ord, or 'fro') are the 2-norm
      // of the elements over the axes (every axis when None); -1 is an explicit ord, a vector
      // norm over one axis; 0 (ord 2 or -2 over two axes) and 2 ('nuc') are matrix norms.
      const int64_t flag = c.integer("flag", -2);
      if (!(flag == -2 || flag == 1 || (flag == -1 && axes.size() == 1))) {
        c.fail(
            "attribute flag = {} with axis ({}) is not supported (the norms of vectors and "
            "of all elements only)",
            flag, fmt::join(axes, ", "));
      }
    }
    if (ord != 1 && ord != 2) c.fail("attribute ord = {} is not supported (1, 2)", ord);
    const Symbol x = c.inputs(1, 1)[0];
    const bool as_vector = !numpy && axes.empty() && !keepdims;
    const std::string_view suffix = as_vector ? "_all" : "";
    const Symbol y = ord == 1
                         ? c.janus("sum", {c.janus("abs", {x}, {}, "_abs")},
                                   {{"axes", axes}, {"keepdims", keepdims}}, suffix)
                         : c.janus("norm", {x}, {{"axes", axes}, {"keepdims", keepdims}}, suffix);
    if (!as_vector) return {y};
    return {c.janus("reshape", {y}, {{"shape", Shape{1}}})};
  };
}

// `n` copies of x joined along `axis`.
Symbol copies(const Call& c, const Symbol& x, int64_t n, int64_t axis, std::string_view suffix) {
  Symbol y = x;
  for (int64_t i = 1; i < n; ++i) {
    y = c.janus("concat", {y, x}, {{"axis", axis}}, fmt::format("{}_copy{}", suffix, i));
  }
  return y;
}

// UpSampling of NCHW input by an integer scale. 'nearest' repeats each element scale times
// along W and then H (copies on a new axis, merged into the one before); 'bilinear' is MXNet's
// deconvolution of each channel by its own kernel (the weight input, [C, 1, 2s - s % 2, same]),
// stride s, padding ceil((s - 1) / 2).
Outputs upsampling(Call& c) {
  const int64_t scale = c.integer("scale");
  if (scale < 1) c.fail("attribute scale = {}, expected a positive integer", scale);
  const std::string type = c.str("sample_type", "nearest");
  const int64_t num_args = c.integer("num_args", 1);
  c.require("multi_input_mode", {"concat"});
  c.ignore({"workspace"});
  if (type == "bilinear") {
    const int64_t channels = c.integer("num_filter", 0);
    if (channels < 1) c.fail("attribute num_filter = {}, expected the channel count", channels);
    const auto& in = c.inputs(2, 2);
    const int64_t pad = scale / 2;
    return {c.janus("conv2d_transpose", {in[0], in[1], c.zeros_constant(channels, "_zero_bias")},
                    {{"stride", Ints{scale, scale}},
                     {"padding", Ints{pad, pad}},
                     {"dilation", Ints{1, 1}},
                     {"groups", channels},
                     {"output_padding", Ints{0, 0}}})};
  }
  if (type != "nearest") c.fail("sample_type '{}' is not supported (nearest, bilinear)", type);
  c.ignore({"num_filter"});
  if (num_args != 1) {
    c.fail("attribute num_args = {}: nearest upsampling of several inputs is not supported",
           num_args);
  }
  const Symbol x = c.inputs(1, 1)[0];
  const Symbol w = copies(c, c.janus("expand_dims", {x}, {{"axis", int64_t{4}}}, "_w1"), scale, 4,
                          "_w");  // [N, C, H, W, s]
  const Symbol wide = mxnet_reshape(c, w, {0, 0, 0, -3}, false, "_wide");
  const Symbol h = copies(c, c.janus("expand_dims", {wide}, {{"axis", int64_t{3}}}, "_h1"), scale,
                          3, "_h");  // [N, C, H, s, W s]
  return {mxnet_reshape(c, h, {0, 0, -3, 0}, false, "")};
}

// MXNet's pad_width, flat ("(0, 0, 1, 1)") or numpy's pairs ("((0, 0), (1, 1))").
Ints pad_widths(Call& c) {
  const std::string text = c.str("pad_width", "");
  std::string flat = "(";
  for (char ch : text) {
    if (ch != '(' && ch != ')' && ch != '[' && ch != ']') flat += ch;
  }
  flat += ")";
  const auto v = parse_ints(flat);
  if (text.empty() || !v || v->empty() || v->size() % 2 != 0) {
    c.fail("attribute pad_width = '{}', expected (before, after) for each axis", text);
  }
  return *v;
}

// Pad and numpy's pad in constant mode (Janus's pad); edge and reflect are not mapped.
Converter pad(std::string value_key) {
  return [value_key](Call& c) -> Outputs {
    const std::string mode = c.str("mode", "constant");
    if (mode != "constant") c.fail("mode '{}' is not supported (constant)", mode);
    const Ints widths = pad_widths(c);
    const double value = c.real(value_key, 0.0);
    c.require("reflect_type", {"even"});
    return {c.janus("pad", {c.inputs(1, 1)[0]}, {{"widths", widths}, {"value", value}})};
  };
}

// The sequence operators: x has the time axis (0 or 1) and the batch axis (the other of the
// two); with use_sequence_length, a second input holds each sequence's length. Without it,
// SequenceMask passes its input on and SequenceLast takes the last step.
//
// With lengths the graph does not know x's rank, so the converters work on xᵀ (every axis
// reversed: transpose without axes), whose last two axes are x's first two: there each step's
// position along the time axis (the stable argsort of zeros of xᵀ's shape, as reversed_along
// makes it) meets the lengths, as int64, reshaped to [N, 1] when the time axis is 0 (xᵀ ends in
// [N, T]) and as they are when it is 1 (xᵀ ends in [T, N]); the result is transposed back.
struct SequenceArgs {
  int64_t axis = 0;
  bool lengths = false;
};

SequenceArgs sequence_args(Call& c, std::initializer_list<int64_t> axes) {
  SequenceArgs a;
  a.lengths = c.boolean("use_sequence_length", false);
  a.axis = c.integer("axis", 0);
  if (std::find(axes.begin(), axes.end(), a.axis) == axes.end()) {
    c.fail("attribute axis = {}, expected {}", a.axis, fmt::join(axes, " or "));
  }
  c.inputs(a.lengths ? 2 : 1, a.lengths ? 2 : 1);
  return a;
}

// What the converters with lengths share: xᵀ, the positions along the time axis in xᵀ's shape
// (int64), and the lengths aligned with xᵀ's batch axis (int64).
struct SequenceView {
  Symbol xt, positions, lengths;
  int64_t time_axis;  // in xᵀ: -1 (x's axis 0) or -2 (x's axis 1)
};

SequenceView sequence_view(const Call& c, int64_t axis) {
  SequenceView v;
  v.time_axis = -(axis + 1);
  v.xt = c.janus("transpose", {c.input(0)}, {}, "_xt");
  const Symbol never = c.janus("greater", {v.xt, v.xt}, {}, "_never");
  const Symbol zeros = c.janus("cast", {never}, {{"dtype", DType::kInt32}}, "_zeros");
  v.positions = c.janus("argsort", {zeros},
                        {{"axis", v.time_axis}, {"descending", false}, {"dtype", DType::kInt64}},
                        "_positions");
  v.lengths = c.janus("cast", {c.input(1)}, {{"dtype", DType::kInt64}}, "_lengths");
  if (axis == 0) v.lengths = c.janus("reshape", {v.lengths}, {{"shape", Ints{-1, 1}}}, "_column");
  return v;
}

Outputs sequence_mask(Call& c) {
  const SequenceArgs a = sequence_args(c, {0, 1});
  const double value = c.real("value", 0.0);
  if (!a.lengths) return {c.input(0)};
  const SequenceView v = sequence_view(c, a.axis);
  const Symbol inside = c.janus("less", {v.positions, v.lengths}, {}, "_inside");
  // value in xᵀ's dtype and shape: x^0 is 1 for every x, NaN included.
  const Symbol one = with_scalar(c, "power_scalar", v.xt, 0.0, "_one");
  const Symbol filled = with_scalar(c, "mul_scalar", one, value, "_value");
  const Symbol masked = c.janus("where", {inside, v.xt, filled}, {}, "_masked");
  return {c.janus("transpose", {masked})};
}

// SequenceLast with lengths: the step at length - 1 of each sequence, picked by where (the
// other steps give exact zeros, whatever they hold) and summed over the time axis.
Outputs sequence_last(Call& c) {
  const SequenceArgs a = sequence_args(c, {0, 1});
  if (!a.lengths) {
    const Symbol last = constant(c, full(Shape{}, -1.0, DType::kInt64), "_last");
    return {c.janus("take", {c.input(0), last}, {{"axis", a.axis}})};
  }
  const SequenceView v = sequence_view(c, a.axis);
  const Symbol last = with_scalar(c, "add_scalar", v.lengths, -1.0, "_last_step");
  const Symbol at_last = c.janus("equal", {v.positions, last}, {}, "_at_last");
  const Symbol one = with_scalar(c, "power_scalar", v.xt, 0.0, "_one");
  const Symbol zero = with_scalar(c, "mul_scalar", one, 0.0, "_zero");
  const Symbol picked = c.janus("where", {at_last, v.xt, zero}, {}, "_picked");
  const Symbol summed = c.janus("sum", {picked}, {{"axes", Ints{v.time_axis}}}, "_summed");
  return {c.janus("transpose", {summed})};
}

// x broadcast against the array `like` (numpy's rules): where(false, x, x) with a false
// condition of like's shape, which holds for any dtype and for NaN.
Symbol broadcast_against(const Call& c, const Symbol& x, const Symbol& like,
                         std::string_view suffix) {
  const Symbol never = c.janus("greater", {like, like}, {}, fmt::format("{}_never", suffix));
  return c.janus("where", {never, x, x}, {}, suffix);
}

// tile: copies along each axis that reps names, aligned with x's last axes. More reps than x
// has axes give x new leading axes first (MXNet's rule): x broadcast against a constant of
// shape (1,) * len(reps), which adds them and leaves x as it is otherwise.
Outputs tile(Call& c) {
  const Ints reps = c.ints("reps");
  for (int64_t r : reps) {
    if (r < 1) c.fail("attribute reps = ({}), expected positive counts", fmt::join(reps, ", "));
  }
  Symbol y = c.inputs(1, 1)[0];
  if (reps.size() > 1) {
    const Symbol rank = constant(c, zeros(Shape(Ints(reps.size(), 1)), DType::kBool), "_rank");
    y = c.janus("where", {rank, y, y}, {}, "_ranked");
  }
  for (size_t i = 0; i < reps.size(); ++i) {
    const auto axis = static_cast<int64_t>(i) - static_cast<int64_t>(reps.size());
    y = copies(c, y, reps[i], axis, fmt::format("_axis{}", i));
  }
  return {y};
}

// repeat: each element `repeats` times along axis (the flattened input when None): copies on
// a new axis after it, merged into it (codes from the front for axis >= 0, from the back for
// a negative one).
Outputs repeat(Call& c) {
  const int64_t n = c.integer("repeats");
  if (n < 1) c.fail("attribute repeats = {}, expected a positive count", n);
  Symbol x = c.inputs(1, 1)[0];
  const auto axis_text = c.raw("axis");
  int64_t axis = 0;
  if (!axis_text || *axis_text == "None") {
    x = c.janus("reshape", {x}, {{"shape", Shape{-1}}}, "_flatten");
  } else if (const auto v = parse_int(*axis_text)) {
    axis = *v;
  } else {
    c.fail("attribute axis = '{}', expected an integer or None", *axis_text);
  }
  const int64_t at = axis >= 0 ? axis + 1 : axis;
  const Symbol y = copies(c, c.janus("expand_dims", {x}, {{"axis", at}}, "_new"), n, at, "");
  Ints codes(static_cast<size_t>(axis >= 0 ? axis : -axis - 1), 0);
  if (axis >= 0) {
    codes.insert(codes.end(), {-3, -2});
  } else {
    codes.insert(codes.begin(), {-2, -3});
  }
  return {mxnet_reshape(c, y, codes, axis < 0, "_merged")};
}

// Positions as int64 for Janus's take and embedding (MXNet's are usually float32, truncated).
Symbol positions(const Call& c, const Symbol& p, std::string_view suffix) {
  return c.janus("cast", {p}, {{"dtype", DType::kInt64}}, suffix);
}

// The extent n of x along `axis` as an int64 scalar, counted from a small corner of x: the
// axes after `axis` merged into one (mxnet_reshape, a view) and cut to their first element, and
// for axis >= 0 the axes before it too, which leaves [1, ..., 1, n, 1] (n elements) to count;
// for a negative axis, the axes before it are merged and cut ([1, n, trailing...]), and the
// counts along it of the trailing columns, all n, give their largest.
Symbol extent_along(const Call& c, const Symbol& x, int64_t axis) {
  Symbol corner;
  if (axis >= 0) {
    Ints codes(static_cast<size_t>(axis + 1), 0);
    codes.push_back(-1);
    const Symbol rows = mxnet_reshape(c, x, codes, false, "_rows");  // [d0 .. d_axis, rest]
    corner = c.janus("slice_axis", {rows},
                     {{"axis", axis + 1}, {"begin", int64_t{0}}, {"end", int64_t{1}}}, "_column");
    if (axis > 0) {
      corner = c.janus("slice", {corner},
                       {{"begin", Ints(static_cast<size_t>(axis), 0)},
                        {"end", Ints(static_cast<size_t>(axis), 1)},
                        {"step", Ints{}}},
                       "_corner");
    }
  } else {
    Ints codes{-1};
    codes.insert(codes.end(), static_cast<size_t>(-axis), 0);
    const Symbol rows = mxnet_reshape(c, x, codes, true, "_rows");  // [rest, d_axis .. d_-1]
    corner = c.janus("slice_axis", {rows},
                     {{"axis", int64_t{0}}, {"begin", int64_t{0}}, {"end", int64_t{1}}}, "_corner");
  }
  const Symbol one = constant(c, full(Shape{}, 1.0, DType::kFloat64), "_one");
  const Symbol zero = constant(c, full(Shape{}, 0.0, DType::kFloat64), "_zero");
  const Symbol never = c.janus("greater", {corner, corner}, {}, "_never");
  const Symbol ones = c.janus("where", {never, zero, one}, {}, "_ones");
  const Ints along{axis >= 0 ? axis : 1};
  const Symbol counts = c.janus("sum", {ones}, {{"axes", along}, {"keepdims", false}}, "_counts");
  const Symbol n = c.janus("max", {counts}, {{"axes", Ints{}}, {"keepdims", false}}, "_extent");
  return c.janus("cast", {n}, {{"dtype", DType::kInt64}}, "_extent_int");
}

// take along axis. MXNet truncates the positions to integers, then 'clip' moves those below 0
// to 0 and those past the end to the last, 'wrap' takes them modulo the extent n (int64 mod,
// the divisor's sign: in [0, n)); 'raise' is Janus's take, which refuses positions outside
// [-n, n) when the result is read. n comes from x at run time (extent_along).
Outputs take(Call& c) {
  const int64_t axis = c.integer("axis", 0);
  const std::string mode = c.str("mode", "clip");
  if (mode != "clip" && mode != "wrap" && mode != "raise") {
    c.fail("mode '{}' is not supported (clip, wrap, raise)", mode);
  }
  const auto& in = c.inputs(2, 2);
  Symbol p = in[1];
  if (mode == "clip") p = with_scalar(c, "maximum_scalar", p, 0.0, "_low");
  p = positions(c, p, "_positions");
  if (mode == "clip") {
    const Symbol last =
        with_scalar(c, "subtract_scalar", extent_along(c, in[0], axis), 1.0, "_last");
    p = c.janus("minimum", {p, last}, {}, "_clipped");
  } else if (mode == "wrap") {
    p = c.janus("mod", {p, extent_along(c, in[0], axis)}, {}, "_wrapped");
  }
  return {c.janus("take", {in[0], p}, {{"axis", axis}})};
}

// slice_like: Janus's slice_like, whose bounds are the second input's extents at run time.
Outputs slice_like(Call& c) {
  const auto& in = c.inputs(2, 2);
  return {c.janus("slice_like", {in[0], in[1]}, {{"axes", c.ints("axes", Ints{})}})};
}

// reshape_like: Janus's reshape_like, MXNet's [lhs_begin, lhs_end) and [rhs_begin, rhs_end) as
// its axis ranges: {} every axis, {begin} to the last, {begin, end} (a begin of None is 0).
Outputs reshape_like(Call& c) {
  auto range = [&](const std::string& side) {
    const std::optional<std::string> begin = c.raw(side + "_begin"), end = c.raw(side + "_end");
    const bool has_end = end && *end != "None";
    if ((!begin || *begin == "None") && !has_end) return Ints{};
    Ints axes{c.integer(side + "_begin", 0)};
    if (has_end) axes.push_back(c.integer(side + "_end"));
    return axes;
  };
  const auto& in = c.inputs(2, 2);
  return {c.janus("reshape_like", {in[0], in[1]},
                  {{"x_axes", range("lhs")}, {"like_axes", range("rhs")}})};
}

// gather_nd: positions (MXNet's are usually float32, truncated) as int64 for Janus's
// gather_nd, whose tuples run down the first axis as MXNet's do.
Outputs gather_nd(Call& c) {
  const auto& in = c.inputs(2, 2);
  return {c.janus("gather_nd", {in[0], positions(c, in[1], "_positions")})};
}

// Embedding: rows of the weight; MXNet clips the positions into [0, input_dim).
Outputs embedding(Call& c) {
  const int64_t rows = c.integer("input_dim");
  c.integer("output_dim");  // the weight's extent holds it
  c.require("dtype", {"float32"});
  c.ignore({"sparse_grad"});
  const auto& in = c.inputs(2, 2);
  Symbol p = with_scalar(c, "maximum_scalar", in[0], 0.0, "_low");
  p = with_scalar(c, "minimum_scalar", p, static_cast<double>(rows - 1), "_high");
  return {c.janus("embedding", {positions(c, p, "_positions"), in[1]})};
}

// where: numpy's broadcasts (Janus's where); the legacy one takes a condition of x's shape or
// a vector choosing along x's first axis, which both hold with every axis reversed.
Outputs np_where(Call& c) {
  const auto& in = c.inputs(3, 3);
  return {c.janus("where", {in[0], in[1], in[2]})};
}

Outputs where(Call& c) {
  const auto& in = c.inputs(3, 3);
  const Symbol y = c.janus(
      "where",
      {reversed(c, in[0], "_cond_t"), reversed(c, in[1], "_x_t"), reversed(c, in[2], "_y_t")}, {},
      "_t");
  return {reversed(c, y, "")};
}

Outputs squeeze(Call& c) {
  const Ints axes = c.ints("axis", Ints{});
  return {c.janus("squeeze", {c.inputs(1, 1)[0]}, {{"axes", axes}})};
}

// MXNet's begin/end/step tuples with None entries: ("(0, None)").
std::vector<std::optional<int64_t>> optional_ints(Call& c, const std::string& key) {
  std::string text = c.str(key, "()");
  std::vector<std::optional<int64_t>> out;
  std::string_view s = text;
  while (!s.empty() && (s.front() == '(' || s.front() == '[' || s.front() == ' '))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ')' || s.back() == ']' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty()) {
    const size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "None") {
      out.emplace_back();
    } else if (const auto v = parse_int(item)) {
      out.emplace_back(*v);
    } else if (!(item.empty() && comma == std::string_view::npos)) {
      c.fail("attribute {} = '{}', expected a tuple of integers or None", key, text);
    }
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// Janus's slicing operators take explicit bounds in [-n, n]. An open end (MXNet's None: the
// extent n) is met by appending x's first element along the axis (extent n + 1) and ending at
// -1; a negative begin then moves one further from the end.
struct Bound {
  int64_t begin, end;
};

Bound open_end(const Call& c, Symbol& x, int64_t axis, int64_t begin, std::string_view suffix) {
  const Symbol first =
      c.janus("slice_axis", {x}, {{"axis", axis}, {"begin", int64_t{0}}, {"end", int64_t{1}}},
              fmt::format("{}_first{}", suffix, axis));
  x = c.janus("concat", {x, first}, {{"axis", axis}}, fmt::format("{}_longer{}", suffix, axis));
  return {begin >= 0 ? begin : begin - 1, -1};
}

// slice (legacy and numpy mode): per leading axis begin, end and step (None: from the start,
// to the end, step 1), one Janus slice. Negative steps are not mapped.
Outputs slice(Call& c) {
  auto begin = optional_ints(c, "begin");
  auto end = optional_ints(c, "end");
  auto step = optional_ints(c, "step");
  if (begin.size() != end.size() || (!step.empty() && step.size() != begin.size())) {
    c.fail("begin, end and step have {}, {} and {} entries, expected as many each", begin.size(),
           end.size(), step.size());
  }
  step.resize(begin.size());
  // Whole trailing axes need no bounds.
  while (!begin.empty() && begin.back().value_or(0) == 0 && !end.back() &&
         step.back().value_or(1) == 1) {
    begin.pop_back();
    end.pop_back();
    step.pop_back();
  }
  Symbol x = c.inputs(1, 1)[0];
  if (begin.empty()) return {x};
  Ints b, e, st;
  for (size_t i = 0; i < begin.size(); ++i) {
    st.push_back(step[i].value_or(1));
    if (st.back() < 1) {
      c.fail("step {} on axis {} is not supported (positive steps only)", st.back(), i);
    }
    Bound bound{begin[i].value_or(0), end[i].value_or(0)};
    if (!end[i]) bound = open_end(c, x, static_cast<int64_t>(i), bound.begin, "");
    b.push_back(bound.begin);
    e.push_back(bound.end);
  }
  return {c.janus("slice", {x}, {{"begin", b}, {"end", e}, {"step", st}})};
}

Outputs slice_axis(Call& c) {
  const int64_t axis = c.integer("axis");
  const int64_t begin = c.integer("begin", 0);
  const auto end_text = c.raw("end");
  std::optional<int64_t> end;
  if (end_text && *end_text != "None") {
    end = parse_int(*end_text);
    if (!end) c.fail("attribute end = '{}', expected an integer or None", *end_text);
  }
  Symbol x = c.inputs(1, 1)[0];
  const Bound bound = end ? Bound{begin, *end} : open_end(c, x, axis, begin, "");
  return {c.janus("slice_axis", {x}, {{"axis", axis}, {"begin", bound.begin}, {"end", bound.end}})};
}

// stack: two inputs are Janus's stack; more are each given the new axis and joined.
Outputs stack(Call& c) {
  const int64_t axis = c.integer("axis", 0);
  c.ignore({"num_args"});
  const auto& in = c.inputs(1, std::numeric_limits<size_t>::max());
  if (in.size() == 2) return {c.janus("stack", {in[0], in[1]}, {{"axis", axis}})};
  Symbol y;
  for (size_t i = 0; i < in.size(); ++i) {
    const Symbol e = c.janus("expand_dims", {in[i]}, {{"axis", axis}}, fmt::format("_new{}", i));
    y = i == 0 ? e
               : c.janus("concat", {y, e}, {{"axis", axis}},
                         i + 1 == in.size() ? "" : fmt::format("_{}", i));
  }
  return {y};
}

// A comparison of x with the scalar s (bool results): against x clamped to [s, s], which is s
// in x's dtype and shape (a NaN in x compares false either way, and unequal). An integer x
// truncates a fractional s, as MXNet 1.9.1 does (int32 [1, 2, 3] >= 2.5 is [False, True, True]
// there).
Symbol compare_with_scalar(const Call& c, std::string_view op, const Symbol& x, double s,
                           std::string_view suffix) {
  const Symbol at_least =
      with_scalar(c, "maximum_scalar", x, s, fmt::format("{}_at_least", suffix));
  const Symbol scalar =
      with_scalar(c, "minimum_scalar", at_least, s, fmt::format("{}_scalar", suffix));
  return c.janus(op, {x, scalar}, {}, suffix);
}

// numpy-mode comparisons with a scalar (bool results); with another array they are Janus's
// comparison (binary).
Converter np_compare_scalar(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const double s = c.real("scalar");
    c.ignore({"is_int"});
    return {compare_with_scalar(c, op, c.inputs(1, 1)[0], s, "")};
  };
}

// hard_sigmoid: clip(alpha x + beta, 0, 1).
Outputs hard_sigmoid(Call& c) {
  const double alpha = c.real("alpha", 0.2), beta = c.real("beta", 0.5);
  const Symbol y = with_scalar(c, "mul_scalar", c.inputs(1, 1)[0], alpha, "_scaled");
  return {c.janus("clip", {with_scalar(c, "add_scalar", y, beta, "_shifted")},
                  {{"a_min", 0.0}, {"a_max", 1.0}})};
}

Outputs softsign(Call& c) { return {softsign_of(c, c.inputs(1, 1)[0])}; }

// argmax and argmin: positions along axis (the flattened input when None); the legacy
// operators give them as float32 (shape (1,) without an axis), numpy mode as int64.
Converter arg_reduce(std::string_view op, bool numpy) {
  return [op, numpy](Call& c) -> Outputs {
    const auto [x, axis] = ordered_axis(c);
    const bool keepdims = c.boolean("keepdims", false);
    const bool flattened = c.raw("axis").value_or("None") == "None";
    if (flattened && keepdims) c.fail("keepdims = True without an axis is not supported");
    const Symbol p =
        c.janus(op, {x}, {{"axis", axis}, {"keepdims", keepdims}}, numpy ? "" : "_positions");
    if (numpy) return {p};
    if (!flattened) return {c.janus("cast", {p}, {{"dtype", DType::kFloat32}})};
    const Symbol f = c.janus("cast", {p}, {{"dtype", DType::kFloat32}}, "_float");
    return {c.janus("reshape", {f}, {{"shape", Shape{1}}})};
  };
}

// one_hot: rows of off_value with on_value at each label, truncated to an integer; a label
// outside [0, depth) gives a row of off_value, as MXNet. Labels are compared with the
// positions 0 .. depth - 1.
Outputs one_hot(Call& c) {
  const int64_t depth = c.integer("depth");
  if (depth < 1) c.fail("attribute depth = {}, expected a positive count", depth);
  const double on = c.real("on_value", 1.0), off = c.real("off_value", 0.0);
  const DType dtype =
      dtype_attr(c, "dtype", DType::kFloat32,
                 {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8});
  Symbol labels = c.janus("cast", {c.inputs(1, 1)[0]}, {{"dtype", DType::kInt64}}, "_int");
  labels = c.janus("cast", {labels}, {{"dtype", DType::kFloat64}}, "_labels");
  labels = c.janus("expand_dims", {labels}, {{"axis", int64_t{-1}}}, "_column");
  const Symbol positions =
      constant(c, arange(0, static_cast<double>(depth), 1, DType::kFloat64), "_positions");
  const Symbol hit = c.janus("equal", {labels, positions}, {}, "_hit");
  return {c.janus("where", {hit, constant(c, full(Shape{}, on, dtype), "_on"),
                            constant(c, full(Shape{}, off, dtype), "_off")})};
}

// broadcast_to: a target without MXNet's 0 ("keep this extent") is Janus's broadcast_to.
Outputs broadcast_to(Call& c) {
  const Ints shape = c.ints("shape");
  for (int64_t d : shape) {
    if (d <= 0) {
      c.fail(
          "attribute shape = ({}) has the extent {}, which is not supported (positive "
          "extents)",
          fmt::join(shape, ", "), d);
    }
  }
  return {c.janus("broadcast_to", {c.inputs(1, 1)[0]}, {{"shape", Shape(shape)}})};
}

Outputs cast(Call& c) {
  const DType dtype = dtype_attr(c, "dtype", DType::kFloat32,
                                 {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
                                  DType::kInt64, DType::kUInt8});
  return {c.janus("cast", {c.inputs(1, 1)[0]}, {{"dtype", dtype}})};
}

// 1 where `holds` (a comparison), 0 elsewhere, in x's dtype: the legacy comparisons give
// numbers of their inputs' dtype. x^0 is 1 for every x, NaN included.
Symbol as_numbers(const Call& c, const Symbol& holds, const Symbol& x) {
  const Symbol one = with_scalar(c, "power_scalar", x, 0.0, "_one");
  const Symbol zero = with_scalar(c, "mul_scalar", one, 0.0, "_zero");
  return c.janus("where", {holds, one, zero});
}

// The legacy comparisons of two arrays (broadcast_equal, _greater, ...; the broadcast_ ones
// broadcast, the others take one shape, which broadcasting also takes).
Converter legacy_compare(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const auto& in = c.inputs(2, 2);
    return {as_numbers(c, c.janus(op, {in[0], in[1]}, {}, "_holds"), in[0])};
  };
}

// The legacy comparisons with a scalar (_equal_scalar, ...): the scalar in x's dtype, as the
// numpy-mode ones (np_compare_scalar), then 1 or 0 in x's dtype.
Converter legacy_compare_scalar(std::string_view op) {
  return [op](Call& c) -> Outputs {
    const double s = c.real("scalar");
    c.ignore({"is_int"});
    const Symbol x = c.inputs(1, 1)[0];
    return {as_numbers(c, compare_with_scalar(c, op, x, s, "_holds"), x)};
  };
}

// MXNet's remainder takes the divisor's sign, as Janus's mod, but x % 0 is 0 there (NaN in
// NumPy and Janus): where(b == 0, 0, mod(a, b)), the zero being 0 * b.
Symbol mxnet_mod(const Call& c, const Symbol& a, const Symbol& b, std::string_view suffix) {
  const Symbol zero = with_scalar(c, "mul_scalar", b, 0.0, fmt::format("{}_zero", suffix));
  const Symbol by_zero = c.janus("equal", {b, zero}, {}, fmt::format("{}_by_zero", suffix));
  return c.janus("where",
                 {by_zero, zero, c.janus("mod", {a, b}, {}, fmt::format("{}_mod", suffix))}, {},
                 suffix);
}

Outputs mod(Call& c) {
  const auto& in = c.inputs(2, 2);
  return {mxnet_mod(c, in[0], in[1], "")};
}

// _mod_scalar (x % s) and _rmod_scalar (s % x): the scalar as an array in x's dtype (as the
// comparisons with a scalar make it). A zero divisor scalar would give 0 for every element,
// also where x is NaN, which that array cannot express: it is refused.
Converter mod_scalar(bool reversed) {
  return [reversed](Call& c) -> Outputs {
    const double s = c.real("scalar");
    c.ignore({"is_int"});
    if (!reversed && s == 0) c.fail("attribute scalar = 0: every element would be 0");
    const Symbol x = c.inputs(1, 1)[0];
    const Symbol at_least = with_scalar(c, "maximum_scalar", x, s, "_at_least");
    const Symbol scalar = with_scalar(c, "minimum_scalar", at_least, s, "_scalar");
    return {reversed ? mxnet_mod(c, scalar, x, "") : mxnet_mod(c, x, scalar, "")};
  };
}

// broadcast_axis / broadcast_axes: each named axis (of extent 1; MXNet 1.9.1 takes no
// negative axis) to its size. x with its axes reversed is broadcast against a constant with
// `size` first and 1 on the axis' a axes before it in x (where(false, x, x)), then reversed back.
Outputs broadcast_axis(Call& c) {
  const Ints axes = c.ints("axis", Ints{});
  const Ints sizes = c.ints("size", Ints{});
  if (axes.size() != sizes.size()) {
    c.fail("attribute axis = ({}) and size = ({}) differ in length", fmt::join(axes, ", "),
           fmt::join(sizes, ", "));
  }
  Symbol y = c.inputs(1, 1)[0];
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0) {
      c.fail("attribute axis = ({}) has the negative axis {}, which MXNet refuses",
             fmt::join(axes, ", "), axes[i]);
    }
    if (sizes[i] < 1) {
      c.fail("attribute size = ({}) has the size {}, expected positive sizes",
             fmt::join(sizes, ", "), sizes[i]);
    }
    Ints shape(static_cast<size_t>(axes[i] + 1), 1);
    shape[0] = sizes[i];
    const std::string step = fmt::format("_axis{}", i);
    const Symbol like = constant(c, zeros(Shape(shape), DType::kBool), step + "_like");
    const Symbol xt = reversed(c, y, step + "_xt");
    const Symbol b = c.janus("where", {like, xt, xt}, {}, step + "_wide");
    y = reversed(c, b, i + 1 == axes.size() ? std::string() : step);
  }
  return {y};
}

// broadcast_like: lhs broadcast to rhs's shape (lhs_axes and rhs_axes are not mapped).
Outputs broadcast_like(Call& c) {
  c.require("lhs_axes", {});
  c.require("rhs_axes", {});
  const auto& in = c.inputs(2, 2);
  return {broadcast_against(c, in[0], in[1], "")};
}

// `parts` equal parts of x along `axis`: the axis split into (parts, n / parts) by
// mxnet_reshape's code -4, and part i taken from it (a scalar position drops that axis). A
// negative axis counts from the end: the same on x with its axes reversed.
Outputs equal_parts(const Call& c, Symbol x, int64_t parts, int64_t axis, bool squeeze) {
  const bool from_back = axis < 0;
  if (from_back) {
    x = reversed(c, x, "_xt");
    axis = -axis - 1;
  }
  Ints codes(static_cast<size_t>(axis), 0);
  codes.insert(codes.end(), {-4, parts, -1, -2});
  const Symbol r = mxnet_reshape(c, x, codes, false, "_parts");
  Outputs out;
  for (int64_t i = 0; i < parts; ++i) {
    const Symbol at =
        constant(c, full(Shape{}, static_cast<double>(i), DType::kInt64), fmt::format("_at{}", i));
    Symbol y = c.janus("take", {r, at}, {{"axis", axis}}, fmt::format("_part{}", i));
    if (squeeze) y = c.janus("squeeze", {y}, {{"axes", Ints{axis}}}, fmt::format("_one{}", i));
    out.push_back(from_back ? reversed(c, y, fmt::format("_output{}", i)) : y);
  }
  return out;
}

// _zeros (numpy mode: _npi_zeros): a constant. In a legacy file an extent of 0 is unknown
// (MXNet infers it from the consumer) and becomes 1, which broadcasts: Gluon's recurrent layers
// begin with such states, (L·D, 0, H), and rnn takes states of batch 1 for any batch. A consumer
// that does not broadcast names the mismatch when the graph is bound.
Outputs zeros(Call& c) {
  c.inputs(0, 0);
  Ints shape = c.ints("shape", Ints{});
  const DType dtype = dtype_attr(c, "dtype", DType::kFloat32,
                                 {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
                                  DType::kInt64, DType::kUInt8});
  c.ignore({"ctx"});
  for (int64_t& d : shape) {
    if (d < 0) c.fail("attribute shape has the extent {}, expected extents >= 0", d);
    if (d == 0 && c.op() == "_zeros") d = 1;
  }
  return {constant(c, janus::zeros(Shape(shape), dtype), "")};
}

// RNN: the whole recurrence as Janus's rnn, whose one states input
// [S, L·D, N, H] stacks h (and c) and whose final states come back apart. The packed
// parameters come from _rnn_param_concat (a concat along its dim). Dropout between layers (p)
// acts only in training.
Outputs rnn(Call& c) {
  const std::string mode = c.str("mode", "");
  if (mode != "rnn_relu" && mode != "rnn_tanh" && mode != "lstm" && mode != "gru") {
    c.fail("attribute mode = '{}', expected rnn_relu, rnn_tanh, lstm or gru", mode);
  }
  const int64_t state_size = c.integer("state_size");
  const int64_t layers = c.integer("num_layers", 1);
  const bool bidirectional = c.boolean("bidirectional", false);
  const bool state_outputs = c.boolean("state_outputs", false);
  c.require("use_sequence_length", {"False", "0"});
  c.require("projection_size", {});
  c.require("lstm_state_clip_min", {});
  c.require("lstm_state_clip_max", {});
  c.ignore({"p", "lstm_state_clip_nan"});
  const bool lstm = mode == "lstm";
  const size_t inputs = lstm ? 4 : 3;
  const auto& in = c.inputs(inputs, inputs);
  const Symbol states = lstm ? c.janus("stack", {in[2], in[3]}, {{"axis", int64_t{0}}}, "_states")
                             : c.janus("expand_dims", {in[2]}, {{"axis", int64_t{0}}}, "_states");
  const Symbol r = c.janus("rnn", {in[0], in[1], states},
                           {{"mode", mode},
                            {"state_size", state_size},
                            {"num_layers", layers},
                            {"bidirectional", bidirectional}});
  Outputs out{r[0]};
  if (!state_outputs) return out;
  for (int64_t k = 0; k < (lstm ? 2 : 1); ++k) {
    const std::string suffix = k == 0 ? "_h" : "_c";
    const Symbol part =
        c.janus("slice_axis", {r[1]}, {{"axis", int64_t{0}}, {"begin", k}, {"end", k + 1}}, suffix);
    out.push_back(c.janus("squeeze", {part}, {{"axes", Ints{0}}}, suffix + "_squeezed"));
  }
  return out;
}

// SliceChannel / split: num_outputs equal parts along axis (default 1); squeeze_axis drops the
// axis, which must then have extent num_outputs.
Outputs slice_channel(Call& c) {
  const int64_t parts = c.integer("num_outputs");
  if (parts < 1) c.fail("attribute num_outputs = {}, expected a positive count", parts);
  const int64_t axis = c.integer("axis", 1);
  const bool squeeze = c.boolean("squeeze_axis", false);
  return equal_parts(c, c.inputs(1, 1)[0], parts, axis, squeeze);
}

// numpy mode's split (_split_v2): `sections` equal parts, or (sections 0) the parts between
// the boundaries `indices` (MXNet writes the first, 0, too) and from the last to the end.
Outputs split_v2(Call& c) {
  const int64_t axis = c.integer("axis", 0);
  const bool squeeze = c.boolean("squeeze_axis", false);
  const int64_t sections = c.integer("sections", 0);
  const Ints indices = c.ints("indices", Ints{});
  const Symbol x = c.inputs(1, 1)[0];
  if (sections > 0) return equal_parts(c, x, sections, axis, squeeze);
  if (indices.empty() || sections < 0) {
    c.fail(
        "attribute sections = {} with indices = ({}), expected positive sections or "
        "boundaries",
        sections, fmt::join(indices, ", "));
  }
  Outputs out;
  for (size_t i = 0; i < indices.size(); ++i) {
    Symbol from = x;
    const std::string part = fmt::format("_part{}", i);
    const Bound bound = i + 1 < indices.size() ? Bound{indices[i], indices[i + 1]}
                                               : open_end(c, from, axis, indices[i], part);
    if (bound.begin < 0 || (i + 1 < indices.size() && indices[i + 1] < indices[i])) {
      c.fail("attribute indices = ({}), expected ascending boundaries >= 0",
             fmt::join(indices, ", "));
    }
    Symbol y = c.janus("slice_axis", {from},
                       {{"axis", axis}, {"begin", bound.begin}, {"end", bound.end}}, part);
    if (squeeze) {
      y = c.janus("squeeze", {y}, {{"axes", Ints{axis}}}, fmt::format("_one{}", i));
    }
    out.push_back(y);
  }
  return out;
}

// LRN across channels (axis 1): x (knorm + alpha / nsize * S)^-beta, S the sum of x^2 over the
// nsize channels centred on each (nothing past the edges). x^2 gets h = nsize / 2 channels of
// zeros before and h + 1 after (extent C + nsize), and S adds its nsize slices [k, k - nsize).
Outputs lrn(Call& c) {
  const double alpha = c.real("alpha", 1e-4), beta = c.real("beta", 0.75);
  const double knorm = c.real("knorm", 2.0);
  const int64_t nsize = c.integer("nsize");
  if (nsize < 1 || nsize % 2 == 0) {
    c.fail("attribute nsize = {}, expected an odd positive window", nsize);
  }
  const Symbol x = c.inputs(1, 1)[0];
  const Symbol sq = c.janus("square", {x}, {}, "_sq");
  const Symbol channel =
      c.janus("slice_axis", {sq},
              {{"axis", int64_t{1}}, {"begin", int64_t{0}}, {"end", int64_t{1}}}, "_channel");
  const Symbol zero = with_scalar(
      c, "mul_scalar", with_scalar(c, "power_scalar", channel, 0.0, "_one"), 0.0, "_zero");
  const int64_t h = nsize / 2;
  Symbol padded = sq;
  if (h > 0) {
    padded = c.janus("concat", {copies(c, zero, h, 1, "_before"), padded}, {{"axis", int64_t{1}}},
                     "_front");
  }
  padded = c.janus("concat", {padded, copies(c, zero, h + 1, 1, "_after")}, {{"axis", int64_t{1}}},
                   "_padded");
  Symbol sum;
  for (int64_t k = 0; k < nsize; ++k) {
    const Symbol s =
        c.janus("slice_axis", {padded}, {{"axis", int64_t{1}}, {"begin", k}, {"end", k - nsize}},
                fmt::format("_window{}", k));
    sum = k == 0 ? s : c.janus("add", {sum, s}, {}, fmt::format("_sum{}", k));
  }
  const Symbol scaled =
      with_scalar(c, "mul_scalar", sum, alpha / static_cast<double>(nsize), "_scaled");
  const Symbol norm = with_scalar(c, "add_scalar", scaled, knorm, "_norm");
  return {c.janus("mul", {x, with_scalar(c, "power_scalar", norm, -beta, "_factor")})};
}

// x reversed along `axis`: the positions n - 1 - i taken along it. A stable argsort of zeros
// of x's shape gives each position i along the axis (ties keep their order), its largest
// n - 1.
Symbol reversed_along(const Call& c, const Symbol& x, int64_t axis, const std::string& suffix) {
  const Symbol never = c.janus("greater", {x, x}, {}, suffix + "_never");
  const Symbol flat = c.janus("cast", {never}, {{"dtype", DType::kInt32}}, suffix + "_zeros");
  const Symbol i =
      c.janus("argsort", {flat}, {{"axis", axis}, {"descending", false}, {"dtype", DType::kInt64}},
              suffix + "_ramp");
  const Symbol last =
      c.janus("max", {i}, {{"axes", Ints{axis}}, {"keepdims", true}}, suffix + "_last");
  const Symbol back = c.janus("subtract", {last, i}, {}, suffix + "_back");
  return c.janus("take_along_axis", {x, back}, {{"axis", axis}}, suffix);
}

// reverse / flip (legacy), numpy's flip: x reversed along each axis named.
Outputs reverse(Call& c) {
  Symbol y = c.inputs(1, 1)[0];
  if (c.op() != "_npi_flip") c.ints("axis");  // required by the legacy names, as in MXNet
  if (c.str("axis", "None") == "None") {
    // numpy's flip without an axis: every axis reversed is the row-major elements in reverse order,
    // whatever the rank.
    const Symbol flat = mxnet_reshape(c, y, Ints{-1}, false, "_flat");
    return {c.janus("reshape_like", {reversed_along(c, flat, 0, "_reversed"), y})};
  }
  const Ints axes = c.ints("axis");
  for (size_t i = 0; i < axes.size(); ++i) {
    y = reversed_along(c, y, axes[i], i + 1 == axes.size() ? "" : fmt::format("_axis{}", i));
  }
  return {y};
}

// SequenceReverse: the time steps (axis 0) in reverse order; with lengths, the first `length`
// steps of each sequence reversed and the rest left in place: step t of sequence b comes from
// length_b - 1 - t when t < length_b (positions and lengths as in sequence_view).
Outputs sequence_reverse(Call& c) {
  const SequenceArgs a = sequence_args(c, {0});
  if (!a.lengths) return {reversed_along(c, c.input(0), 0, "")};
  const SequenceView v = sequence_view(c, a.axis);
  const Symbol inside = c.janus("less", {v.positions, v.lengths}, {}, "_inside");
  const Symbol last = with_scalar(c, "add_scalar", v.lengths, -1.0, "_last_step");
  const Symbol back = c.janus("subtract", {last, v.positions}, {}, "_back");
  const Symbol from = c.janus("where", {inside, back, v.positions}, {}, "_from");
  const Symbol y = c.janus("take_along_axis", {v.xt, from}, {{"axis", v.time_axis}}, "_reversed");
  return {c.janus("transpose", {y})};
}

// SwapAxis / swapaxes (dim1, dim2 default 0): Janus's swapaxes, which finds the permutation
// from the input's rank at run time.
Outputs swap_axis(Call& c) {
  const int64_t dim1 = c.integer("dim1", 0), dim2 = c.integer("dim2", 0);
  return {c.janus("swapaxes", {c.inputs(1, 1)[0]}, {{"dim1", dim1}, {"dim2", dim2}})};
}

// Every MXNet operator that the importer maps, legacy and numpy-mode names side by side.
const std::unordered_map<std::string, Converter>& converters() {
  static const std::unordered_map<std::string, Converter> table = [] {
    std::unordered_map<std::string, Converter> t = {
        {"FullyConnected", fully_connected},
        {"Convolution", convolution},
        {"Deconvolution", deconvolution},
        {"Activation", activation},
        {"LeakyReLU", leaky_relu},
        {"Pooling", pooling},
        {"BatchNorm", batch_norm},
        {"Flatten", flatten},
        {"flatten", flatten},
        {"Dropout", identity},
        {"_copy", identity},
        {"identity", identity},
        {"BlockGrad", identity},
        {"stop_gradient", identity},
        {"_np_copy", identity},
        {"add_n", add_n},
        {"ElementWiseSum", add_n},
        {"Concat", concat("dim", 1)},
        {"concat", concat("dim", 1)},
        {"_npi_concatenate", concat("axis", 0)},
        {"Reshape", reshape},
        {"reshape", reshape},
        {"_np_reshape", np_reshape},
        {"_npx_reshape", npx_reshape},
        {"transpose", transpose},
        {"_np_transpose", transpose},
        {"clip", clip},
        {"_npi_clip", clip},
        {"softmax", softmax("softmax")},
        {"_npx_softmax", softmax("softmax")},
        {"log_softmax", softmax("log_softmax")},
        {"_npx_log_softmax", softmax("log_softmax")},
        {"SoftmaxOutput", softmax_output},
        {"Softmax", softmax_output},
        {"SoftmaxActivation", softmax_activation},
        {"expand_dims", expand_dims},
        {"_npi_expand_dims", expand_dims},
        {"sort", sort},
        {"_npi_sort", sort},
        {"argsort", argsort},
        {"_npi_argsort", argsort},
        {"topk", topk},
        {"_npx_topk", topk},
        {"MakeLoss", make_loss},
        {"make_loss", make_loss},
        {"LinearRegressionOutput", regression_output("")},
        {"MAERegressionOutput", regression_output("")},
        {"LogisticRegressionOutput", regression_output("sigmoid")},
        {"L2Normalization", l2_normalization},
        {"InstanceNorm", instance_norm},
        {"GroupNorm", group_norm},
        {"LayerNorm", layer_norm},
        {"_npx_layer_norm", layer_norm},
        {"smooth_l1", smooth_l1},
        {"norm", norm(false)},
        {"_npi_norm", norm(true)},
        {"UpSampling", upsampling},
        {"Pad", pad("constant_value")},
        {"pad", pad("constant_value")},
        {"_npi_pad", pad("constant_value")},
        {"SequenceMask", sequence_mask},
        {"_npx_sequence_mask", sequence_mask},
        {"SequenceLast", sequence_last},
        {"tile", tile},
        {"_npi_tile", tile},
        {"repeat", repeat},
        {"take", take},
        {"_npi_take", take},
        {"Embedding", embedding},
        {"_npx_embedding", embedding},
        {"where", where},
        {"_npi_where", np_where},
        {"squeeze", squeeze},
        {"_np_squeeze", squeeze},
        {"slice", slice},
        {"_npi_slice", slice},
        {"_npx_slice", slice},
        {"crop", slice},
        {"slice_axis", slice_axis},
        {"stack", stack},
        {"_npi_stack", stack},
        {"Cast", cast},
        {"hard_sigmoid", hard_sigmoid},
        {"softsign", softsign},
        {"argmax", arg_reduce("argmax", false)},
        {"argmin", arg_reduce("argmin", false)},
        {"_npi_argmax", arg_reduce("argmax", true)},
        {"_npi_argmin", arg_reduce("argmin", true)},
        {"one_hot", one_hot},
        {"_npx_one_hot", one_hot},
        {"broadcast_to", broadcast_to},
        {"_npi_broadcast_to", broadcast_to},
        {"cast", cast},
        {"_npx_cast", cast},
        {"_contrib_SyncBatchNorm", batch_norm},
        {"broadcast_axis", broadcast_axis},
        {"broadcast_axes", broadcast_axis},
        {"broadcast_like", broadcast_like},
        {"SliceChannel", slice_channel},
        {"RNN", rnn},
        {"_zeros", zeros},
        {"_npi_zeros", zeros},
        {"_rnn_param_concat", concat("dim", 1)},
        {"split", slice_channel},
        {"_split_v2", split_v2},
        {"LRN", lrn},
        {"reverse", reverse},
        {"flip", reverse},
        {"_npi_flip", reverse},
        {"SequenceReverse", sequence_reverse},
        {"SwapAxis", swap_axis},
        {"swapaxes", swap_axis},
        {"slice_like", slice_like},
        {"gather_nd", gather_nd},
        {"reshape_like", reshape_like},
        {"_npi_hsplit", split_v2},
    };
    for (const auto& [names, op] :
         std::vector<std::pair<std::vector<std::string>, std::string_view>>{
             {{"relu", "_npx_relu"}, "relu"},
             {{"sigmoid", "_npx_sigmoid"}, "sigmoid"},
             {{"tanh", "_npi_tanh"}, "tanh"},
             {{"exp", "_npi_exp"}, "exp"},
             {{"log", "_npi_log"}, "log"},
             {{"sqrt", "_npi_sqrt"}, "sqrt"},
             {{"abs", "_npi_absolute", "_npi_abs"}, "abs"},
             {{"square", "_npi_square"}, "square"},
             {{"negative", "_npi_negative"}, "negative"},
             {{"rsqrt"}, "rsqrt"},
             {{"erf"}, "erf"},
             {{"log1p", "_npi_log1p"}, "log1p"},
             {{"sin", "_npi_sin"}, "sin"},
             {{"cos", "_npi_cos"}, "cos"},
             {{"sign", "_npi_sign"}, "sign"}}) {
      for (const std::string& n : names) t.emplace(n, unary(op));
    }
    for (const auto& [names, op] :
         std::vector<std::pair<std::vector<std::string>, std::string_view>>{
             {{"elemwise_add", "_plus", "_add", "_Plus", "broadcast_add", "broadcast_plus",
               "_npi_add"},
              "add"},
             {{"elemwise_sub", "_minus", "_sub", "_Minus", "broadcast_sub", "broadcast_minus",
               "_npi_subtract"},
              "subtract"},
             {{"elemwise_mul", "_mul", "_Mul", "broadcast_mul", "_npi_multiply"}, "mul"},
             {{"elemwise_div", "_div", "_Div", "broadcast_div", "_npi_true_divide"}, "divide"},
             {{"_maximum", "broadcast_maximum", "_npi_maximum"}, "maximum"},
             {{"_minimum", "broadcast_minimum", "_npi_minimum"}, "minimum"},
             {{"_power", "broadcast_power", "_npi_power"}, "power"},
             {{"_hypot", "broadcast_hypot", "_npi_hypot"}, "hypot"},
             {{"_npi_arctan2"}, "arctan2"},
             {{"_npi_copysign"}, "copysign"}}) {
      for (const std::string& n : names) t.emplace(n, binary(op));
    }
    for (const auto& [names, op] :
         std::vector<std::pair<std::vector<std::string>, std::string_view>>{
             {{"_plus_scalar", "_PlusScalar", "_npi_add_scalar"}, "add_scalar"},
             {{"_minus_scalar", "_MinusScalar", "_npi_subtract_scalar"}, "subtract_scalar"},
             {{"_rminus_scalar", "_RMinusScalar", "_npi_rsubtract_scalar"}, "rsubtract_scalar"},
             {{"_mul_scalar", "_MulScalar", "_npi_multiply_scalar"}, "mul_scalar"},
             {{"_div_scalar", "_DivScalar", "_npi_true_divide_scalar"}, "divide_scalar"},
             {{"_rdiv_scalar", "_RDivScalar", "_npi_rtrue_divide_scalar"}, "rdivide_scalar"},
             {{"_power_scalar", "_PowerScalar", "_npi_power_scalar"}, "power_scalar"},
             {{"_rpower_scalar", "_RPowerScalar", "_npi_rpower_scalar"}, "rpower_scalar"},
             {{"_maximum_scalar", "_MaximumScalar", "_npi_maximum_scalar"}, "maximum_scalar"},
             {{"_minimum_scalar", "_MinimumScalar", "_npi_minimum_scalar"}, "minimum_scalar"}}) {
      for (const std::string& n : names) t.emplace(n, scalar(op));
    }
    for (const auto& [names, op] :
         std::vector<std::pair<std::vector<std::string>, std::string_view>>{
             {{"mean", "_npi_mean"}, "mean"},
             {{"sum", "_np_sum", "_npi_sum"}, "sum"},
             {{"max", "_np_max"}, "max"},
             {{"min", "_np_min"}, "min"}}) {
      for (const std::string& n : names) t.emplace(n, reduce(op));
    }
    for (const char* n : {"_mod", "_Mod", "broadcast_mod", "_npi_mod"}) t.emplace(n, mod);
    for (const char* n : {"_mod_scalar", "_ModScalar", "_npi_mod_scalar"}) {
      t.emplace(n, mod_scalar(/*reversed=*/false));
    }
    for (const char* n : {"_rmod_scalar", "_RModScalar", "_npi_rmod_scalar"}) {
      t.emplace(n, mod_scalar(/*reversed=*/true));
    }
    for (std::string_view op :
         {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
      t.emplace(fmt::format("_npi_{}", op), binary(op));
      t.emplace(fmt::format("_npi_{}_scalar", op), np_compare_scalar(op));
    }
    // The legacy comparisons: MXNet 1.x says "lesser" where Janus and numpy say "less".
    for (const auto& [mxnet, op] : std::vector<std::pair<std::string_view, std::string_view>>{
             {"equal", "equal"},
             {"not_equal", "not_equal"},
             {"lesser", "less"},
             {"lesser_equal", "less_equal"},
             {"greater", "greater"},
             {"greater_equal", "greater_equal"}}) {
      t.emplace(fmt::format("broadcast_{}", mxnet), legacy_compare(op));
      t.emplace(fmt::format("_{}", mxnet), legacy_compare(op));
      t.emplace(fmt::format("_{}_scalar", mxnet), legacy_compare_scalar(op));
    }
    return t;
  }();
  return table;
}

}  // namespace

const Converter* find_converter(const std::string& op) {
  const auto it = converters().find(op);
  return it == converters().end() ? nullptr : &it->second;
}

}  // namespace janus::graph::mxnet
