// 2-D convolution geometry and kernels: oneDNN primitives cached by geometry (computing in
// channels-last layout, converted from and to Janus' NCHW around each call), and direct loops for
// float64.
#include "conv.h"

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "janus/base/error.h"

#include "../elementwise/relu_rule.h"
#include "../linalg/onednn.h"
#include "../linalg/primitive_cache.h"

namespace janus::ops {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

std::vector<int64_t> pair_attr(std::string_view op, std::string_view name,
                               const std::vector<int64_t>& v, int64_t min_value) {
  JANUS_CHECK(v.size() == 1 || v.size() == 2, ValueError,
              "{}: {} has {} values [{}], expected 1 or 2 (height, width)", op, name, v.size(),
              fmt::join(v, ", "));
  std::vector<int64_t> out = v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
  JANUS_CHECK(out[0] >= min_value && out[1] >= min_value, ValueError,
              "{}: {} is [{}], expected values >= {}", op, name, fmt::join(v, ", "), min_value);
  return out;
}

struct ConvDescs {
  dnnl::memory::desc src, weights, bias, dst;
  dims strides, dilates, pad_l, pad_r;
};

ConvDescs conv_descs(const ConvGeom& g) {
  const dims weights = g.groups == 1 ? dims{g.o, g.c, g.kh, g.kw}
                                     : dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw};
  return {dnnl::memory::desc({g.n, g.c, g.h, g.w}, dt::f32, tag::nchw),
          dnnl::memory::desc(weights, dt::f32, g.groups == 1 ? tag::oihw : tag::goihw),
          dnnl::memory::desc({g.o}, dt::f32, tag::x),
          dnnl::memory::desc({g.n, g.o, g.oh, g.ow}, dt::f32, tag::nchw),
          {g.stride_h, g.stride_w},
          {g.dil_h - 1, g.dil_w - 1},  // oneDNN counts dilation from 0
          {g.pad_h, g.pad_w},
          {g.pad_h, g.pad_w}};
}

// The layouts the primitives compute in. Weights: whichever the primitive prefers (they are
// small). Activations: channels last (NHWC): oneDNN's direct kernels run on it (plain NCHW
// takes its slower im2col + GEMM path), it is one cheap transpose from Janus' NCHW (none with
// one channel, as a network's grayscale input), and unlike the blocked layouts oneDNN would pick
// (nChw8c) it needs no costly conversion per call and never pads one input channel to eight.
// bench/conv_vs_onednn.cc compares the layouts.
dnnl::memory::desc any_layout(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), dt::f32, tag::any);
}
dnnl::memory::desc channels_last(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), dt::f32, tag::nhwc);
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvGeom& g) {
  const ConvDescs d = conv_descs(g);
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::convolution_direct, channels_last(d.src),
                                      any_layout(d.weights), d.bias, channels_last(d.dst),
                                      d.strides, d.dilates, d.pad_l, d.pad_r),
      onednn_attr(), onednn_engine());
}

// One operand of a primitive: the plain layout of the caller's array and the layout the
// primitive computes in. When they differ, a reorder converts through a buffer of the calling
// thread (before the primitive for inputs, after it for outputs).
struct Operand {
  int arg;
  bool output;
  dnnl::memory::desc plain, internal;
  std::optional<dnnl::reorder> reorder;
};

struct OperandSpec {
  int arg;
  dnnl::memory::desc plain;
  bool output;
};

// Whether two layouts put every element at the same offset: both strided (no blocks) with the
// same strides on every axis longer than one, e.g. NCHW and NHWC with one channel.
bool same_placement(const dnnl::memory::desc& a, const dnnl::memory::desc& b) {
  if (a == b) return true;
  const dnnl_memory_desc_t& x = a.data;
  const dnnl_memory_desc_t& y = b.data;
  if (x.format_kind != dnnl_blocked || y.format_kind != dnnl_blocked || x.ndims != y.ndims ||
      x.offset0 != y.offset0 || x.format_desc.blocking.inner_nblks != 0 ||
      y.format_desc.blocking.inner_nblks != 0 || a.get_size() != b.get_size()) {
    return false;
  }
  for (int i = 0; i < x.ndims; ++i) {
    if (x.dims[i] != y.dims[i]) return false;
    if (x.dims[i] > 1 && x.format_desc.blocking.strides[i] != y.format_desc.blocking.strides[i]) {
      return false;
    }
  }
  return true;
}

// A primitive of one convolution pass for one geometry (a value of the primitive cache), the
// scratchpad its executions need, and its operands. Each pass's constructor is specialized
// below.
template <typename Prim>
struct Cached {
  explicit Cached(const ConvGeom& g);
  std::string impl() const { return impl_name; }

  Prim prim;
  dnnl::memory::desc scratchpad;
  std::vector<Operand> operands;
  std::string impl_name;

 private:
  template <typename Pd>
  void build(const Pd& pd, std::initializer_list<OperandSpec> specs) {
    prim = Prim(pd);
    scratchpad = pd.scratchpad_desc();
    impl_name = pd.impl_info_str();
    dnnl::engine& eng = onednn_engine();
    for (const OperandSpec& s : specs) {
      Operand op{s.arg, s.output, s.plain, pd.query_md(dnnl::query::exec_arg_md, s.arg),
                 std::nullopt};
      if (same_placement(op.plain, op.internal)) {
        op.plain = op.internal;  // the caller's array is already in the primitive's layout
      } else {
        op.reorder =
            s.output
                ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, op.internal, eng, op.plain))
                : dnnl::reorder(dnnl::reorder::primitive_desc(eng, op.plain, eng, op.internal));
      }
      operands.push_back(std::move(op));
    }
  }
};

template <>
Cached<dnnl::convolution_forward>::Cached(const ConvGeom& g) {
  const ConvDescs d = conv_descs(g);
  build(forward_pd(g), {{DNNL_ARG_SRC, d.src, false},
                        {DNNL_ARG_WEIGHTS, d.weights, false},
                        {DNNL_ARG_BIAS, d.bias, false},
                        {DNNL_ARG_DST, d.dst, true}});
}

template <>
Cached<dnnl::convolution_backward_data>::Cached(const ConvGeom& g) {
  const ConvDescs d = conv_descs(g);
  build(dnnl::convolution_backward_data::primitive_desc(
            dnnl::convolution_backward_data::desc(
                dnnl::algorithm::convolution_direct, channels_last(d.src), any_layout(d.weights),
                channels_last(d.dst), d.strides, d.dilates, d.pad_l, d.pad_r),
            onednn_attr(), onednn_engine(), forward_pd(g)),
        {{DNNL_ARG_DIFF_DST, d.dst, false},
         {DNNL_ARG_WEIGHTS, d.weights, false},
         {DNNL_ARG_DIFF_SRC, d.src, true}});
}

template <>
Cached<dnnl::convolution_backward_weights>::Cached(const ConvGeom& g) {
  const ConvDescs d = conv_descs(g);
  build(dnnl::convolution_backward_weights::primitive_desc(
            dnnl::convolution_backward_weights::desc(
                dnnl::algorithm::convolution_direct, channels_last(d.src), any_layout(d.weights),
                channels_last(d.dst), d.strides, d.dilates, d.pad_l, d.pad_r),
            onednn_attr(), onednn_engine(), forward_pd(g)),
        {{DNNL_ARG_SRC, d.src, false},
         {DNNL_ARG_DIFF_DST, d.dst, false},
         {DNNL_ARG_DIFF_WEIGHTS, d.weights, true}});
}

// Runs `c` on the arrays at `ptrs` (one per operand, in the operands' order).
template <typename Prim>
void execute(const Cached<Prim>& c, std::initializer_list<const void*> ptrs) {
  thread_local std::vector<std::vector<std::byte>> buffers;
  // The same arguments every call of this pass: entries are overwritten, the map not rebuilt.
  thread_local std::unordered_map<int, dnnl::memory> args;
  thread_local std::vector<std::pair<dnnl::memory, dnnl::memory>> outputs;  // internal, user
  dnnl::engine& eng = onednn_engine();
  dnnl::stream& stream = onednn_stream();
  if (buffers.size() < c.operands.size()) buffers.resize(c.operands.size());
  outputs.clear();
  size_t i = 0;
  for (const void* p : ptrs) {
    const Operand& op = c.operands[i];
    dnnl::memory user(op.plain, eng, const_cast<void*>(p));
    if (!op.reorder) {
      args[op.arg] = user;
    } else {
      std::vector<std::byte>& buf = buffers[i];
      if (buf.size() < op.internal.get_size()) buf.resize(op.internal.get_size());
      dnnl::memory internal(op.internal, eng, buf.data());
      if (op.output) {
        outputs.emplace_back(internal, user);
      } else {
        op.reorder->execute(stream, user, internal);
      }
      args[op.arg] = internal;
    }
    ++i;
  }
  args[DNNL_ARG_SCRATCHPAD] = onednn_scratchpad(c.scratchpad);
  c.prim.execute(stream, args);
  i = 0;
  for (const Operand& op : c.operands) {
    if (op.reorder && op.output) {
      op.reorder->execute(stream, outputs[i].first, outputs[i].second);
      ++i;
    }
  }
  stream.wait();
}

size_t count(const dnnl::memory::desc& md) { return md.get_size() / sizeof(float); }

// The relu is not part of the primitive (conv_forward applies it), so both activations share one.
const Cached<dnnl::convolution_forward>& cached_forward(ConvGeom g) {
  g.relu = false;
  using Value = Cached<dnnl::convolution_forward>;
  return primitive_cache<ConvGeom, Value>().get(g, [&g](const Value& probe) {
    const ConvDescs d = conv_descs(g);
    std::vector<float> x(count(d.src)), w(count(d.weights)), b(count(d.bias)), y(count(d.dst));
    execute(probe, {x.data(), w.data(), b.data(), y.data()});
  });
}

const Cached<dnnl::convolution_backward_data>& cached_backward_data(const ConvGeom& g) {
  using Value = Cached<dnnl::convolution_backward_data>;
  return primitive_cache<ConvGeom, Value>().get(g, [&g](const Value& probe) {
    const ConvDescs d = conv_descs(g);
    std::vector<float> dy(count(d.dst)), w(count(d.weights)), dx(count(d.src));
    execute(probe, {dy.data(), w.data(), dx.data()});
  });
}

const Cached<dnnl::convolution_backward_weights>& cached_backward_weight(const ConvGeom& g) {
  using Value = Cached<dnnl::convolution_backward_weights>;
  return primitive_cache<ConvGeom, Value>().get(g, [&g](const Value& probe) {
    const ConvDescs d = conv_descs(g);
    std::vector<float> x(count(d.src)), dy(count(d.dst)), dw(count(d.weights));
    execute(probe, {x.data(), dy.data(), dw.data()});
  });
}

// Direct loops. Every (output pixel, tap) pair visits `tap(n, oc, oy, ox, ic, iy, ix, ky, kx)`
// with the input position in range; the three passes differ only in what they accumulate.
template <typename Tap>
void for_each_tap(const ConvGeom& g, Tap tap) {
  const int64_t og = g.o / g.groups, cg = g.c / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t c0 = (oc / og) * cg;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          for (int64_t ic = 0; ic < cg; ++ic) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dil_h;
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t ix = ox * g.stride_w - g.pad_w + kx * g.dil_w;
                if (ix < 0 || ix >= g.w) continue;
                tap(((n * g.o + oc) * g.oh + oy) * g.ow + ox,     // y index
                    ((n * g.c + c0 + ic) * g.h + iy) * g.w + ix,  // x index
                    ((oc * cg + ic) * g.kh + ky) * g.kw + kx);    // weight index
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
void forward_loop(const ConvGeom& g, const T* x, const T* w, const T* b, T* y) {
  const int64_t plane = g.oh * g.ow;
  for (int64_t i = 0; i < g.n * g.o * plane; ++i) y[i] = b[(i / plane) % g.o];
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  if (g.relu) {
    for (int64_t i = 0; i < g.n * g.o * plane; ++i) y[i] = relu_value(y[i]);
  }
}

template <typename T>
void backward_data_loop(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  for (int64_t i = 0; i < g.n * g.c * g.h * g.w; ++i) dx[i] = T(0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += dy[yi] * w[wi]; });
}

template <typename T>
void backward_weight_loop(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  for (int64_t i = 0; i < g.o * (g.c / g.groups) * g.kh * g.kw; ++i) dw[i] = T(0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += x[xi] * dy[yi]; });
}

}  // namespace

std::vector<AttrDef> conv_attrs(std::vector<AttrDef> extra) {
  std::vector<AttrDef> attrs = {{"stride", AttrType::kInts, std::vector<int64_t>{1, 1},
                                 "step (height, width), or one for both"},
                                {"padding", AttrType::kInts, std::vector<int64_t>{0, 0},
                                 "zeros added on each side (height, width)"},
                                {"dilation", AttrType::kInts, std::vector<int64_t>{1, 1},
                                 "spacing of the kernel taps (height, width)"},
                                {"groups", AttrType::kInt, int64_t{1},
                                 "input and output channels split into this many groups"}};
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  return attrs;
}

ConvGeom conv_geometry(std::string_view op, const Shape& x, const Shape& weight,
                       const ConvAttrs& attrs) {
  JANUS_CHECK(x.ndim() == 4, ShapeError,
              "{}: input has shape {}, expected 4 dimensions [batch, channels, height, width]", op,
              x);
  JANUS_CHECK(weight.ndim() == 4, ShapeError,
              "{}: weight has shape {}, expected 4 dimensions [out_channels, in_channels / groups, "
              "kernel_height, kernel_width]",
              op, weight);
  const auto stride = pair_attr(op, "stride", attrs.stride, 1);
  const auto padding = pair_attr(op, "padding", attrs.padding, 0);
  const auto dilation = pair_attr(op, "dilation", attrs.dilation, 1);
  const int64_t groups = attrs.groups;
  JANUS_CHECK(groups >= 1, ValueError, "{}: groups is {}, expected at least 1", op, groups);
  JANUS_CHECK(x[1] % groups == 0 && weight[0] % groups == 0, ValueError,
              "{}: {} input channels and {} output channels must both divide into {} groups", op,
              x[1], weight[0], groups);
  JANUS_CHECK(weight[1] * groups == x[1], ShapeError,
              "{}: input {} has {} channels but weight {} expects {} ({} per group x {} groups)",
              op, x, x[1], weight, weight[1] * groups, weight[1], groups);
  ConvGeom g{x[0], x[1],      x[2],      x[3],       weight[0],  weight[2],   weight[3],   0,
             0,    stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1], groups};
  const int64_t ext_h = (g.kh - 1) * g.dil_h + 1, ext_w = (g.kw - 1) * g.dil_w + 1;
  JANUS_CHECK(g.kh >= 1 && g.kw >= 1 && g.h + 2 * g.pad_h >= ext_h && g.w + 2 * g.pad_w >= ext_w,
              ShapeError,
              "{}: kernel {}x{} (dilation {}x{}) does not fit input {}x{} with padding {}x{}", op,
              g.kh, g.kw, g.dil_h, g.dil_w, g.h, g.w, g.pad_h, g.pad_w);
  g.oh = (g.h + 2 * g.pad_h - ext_h) / g.stride_h + 1;
  g.ow = (g.w + 2 * g.pad_w - ext_w) / g.stride_w + 1;
  return g;
}

void check_conv_dtypes(std::string_view op, std::initializer_list<DType> dtypes) {
  const DType first = *dtypes.begin();
  for (DType d : dtypes) {
    JANUS_CHECK(d == first, TypeError, "{}: operands have dtypes {}, expected one dtype", op,
                fmt::join(dtypes, ", "));
  }
  JANUS_CHECK(first == DType::kFloat32 || first == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", op, first);
}

bool conv_uses_onednn(const ConvGeom& g, DType dtype) {
  return dtype == DType::kFloat32 && g.n > 0 && g.c > 0 && g.o > 0 && g.h > 0 && g.w > 0;
}

void prepare_conv_forward(const ConvGeom& g) {
  if (conv_uses_onednn(g, DType::kFloat32)) cached_forward(g);
}
void prepare_conv_backward_data(const ConvGeom& g) {
  if (conv_uses_onednn(g, DType::kFloat32)) cached_backward_data(g);
}
void prepare_conv_backward_weight(const ConvGeom& g) {
  if (conv_uses_onednn(g, DType::kFloat32)) cached_backward_weight(g);
}

void conv_forward(const ConvGeom& g, DType dtype, const void* x, const void* weight,
                  const void* bias, void* y, const RunContext& ctx) {
  if (dtype == DType::kFloat64) {
    forward_loop(g, static_cast<const double*>(x), static_cast<const double*>(weight),
                 static_cast<const double*>(bias), static_cast<double*>(y));
  } else if (!conv_uses_onednn(g, dtype)) {
    forward_loop(g, static_cast<const float*>(x), static_cast<const float*>(weight),
                 static_cast<const float*>(bias), static_cast<float*>(y));
  } else {
    execute(cached_forward(g), {x, weight, bias, y});
    if (g.relu) relu_in_place(static_cast<float*>(y), g.n * g.o * g.oh * g.ow, ctx);
  }
}

void conv_backward_data(const ConvGeom& g, DType dtype, const void* dy, const void* weight,
                        void* dx) {
  if (dtype == DType::kFloat64) {
    backward_data_loop(g, static_cast<const double*>(dy), static_cast<const double*>(weight),
                       static_cast<double*>(dx));
  } else if (!conv_uses_onednn(g, dtype)) {
    backward_data_loop(g, static_cast<const float*>(dy), static_cast<const float*>(weight),
                       static_cast<float*>(dx));
  } else {
    execute(cached_backward_data(g), {dy, weight, dx});
  }
}

void conv_backward_weight(const ConvGeom& g, DType dtype, const void* x, const void* dy,
                          void* dweight) {
  if (dtype == DType::kFloat64) {
    backward_weight_loop(g, static_cast<const double*>(x), static_cast<const double*>(dy),
                         static_cast<double*>(dweight));
  } else if (!conv_uses_onednn(g, dtype)) {
    backward_weight_loop(g, static_cast<const float*>(x), static_cast<const float*>(dy),
                         static_cast<float*>(dweight));
  } else {
    execute(cached_backward_weight(g), {x, dy, dweight});
  }
}

}  // namespace janus::ops
