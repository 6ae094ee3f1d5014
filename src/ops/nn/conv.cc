// Convolution geometry (1 to 3 spatial axes) and kernels: oneDNN primitives cached by geometry
// (computing in channels-last layout, converted from and to Janus' channels-first layout around
// each call), and direct loops for float64. A float32 forward pass or weight gradient of one input
// channel into a few output channels takes conv_single_channel.cc's kernels instead, and the data
// gradient into a few input channels conv_gemm_backward_data.cc's.
#include "conv.h"

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "janus/base/error.h"
#include "janus/base/omp_threads.h"
#include "janus/ops/ops.h"

#include "../invoke_one.h"
#include "../linalg/onednn.h"
#include "../linalg/primitive_cache.h"
#include "../op_utils.h"
#include "pool.h"
#include "post_op.h"

namespace janus::ops {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

// The dimensions of a shape [a, b, spatial...] from the right-aligned spatial entries of g.
dims with_spatial(const ConvGeom& g, int64_t a, int64_t b, const std::array<int64_t, 3>& sp) {
  dims d{a, b};
  for (int i = kMaxConvDims - g.dims; i < kMaxConvDims; ++i) d.push_back(sp[i]);
  return d;
}
dims spatial(const ConvGeom& g, const std::array<int64_t, 3>& sp, int64_t minus = 0) {
  dims d;
  for (int i = kMaxConvDims - g.dims; i < kMaxConvDims; ++i) d.push_back(sp[i] - minus);
  return d;
}

// The plain (channels-first) and channels-last tags of an activation, and the weights' tags,
// by number of spatial axes.
tag plain_tag(int dims) { return dims == 1 ? tag::ncw : dims == 2 ? tag::nchw : tag::ncdhw; }
tag last_tag(int dims) { return dims == 1 ? tag::nwc : dims == 2 ? tag::nhwc : tag::ndhwc; }
tag weight_tag(int dims, bool grouped) {
  if (grouped) return dims == 1 ? tag::goiw : dims == 2 ? tag::goihw : tag::goidhw;
  return dims == 1 ? tag::oiw : dims == 2 ? tag::oihw : tag::oidhw;
}

struct ConvDescs {
  dnnl::memory::desc src, weights, bias, dst;
  dims strides, dilates, pad_l, pad_r;
};

ConvDescs conv_descs(const ConvGeom& g) {
  dims weights = with_spatial(g, g.o, g.c / g.groups, g.k);
  if (g.groups > 1) {
    weights[0] = g.o / g.groups;
    weights.insert(weights.begin(), g.groups);
  }
  return {dnnl::memory::desc(with_spatial(g, g.n, g.c, g.in), dt::f32, plain_tag(g.dims)),
          dnnl::memory::desc(weights, dt::f32, weight_tag(g.dims, g.groups > 1)),
          dnnl::memory::desc({g.o}, dt::f32, tag::x),
          dnnl::memory::desc(with_spatial(g, g.n, g.o, g.out), dt::f32, plain_tag(g.dims)),
          spatial(g, g.stride),
          spatial(g, g.dil, 1),  // oneDNN counts dilation from 0
          spatial(g, g.pad),
          spatial(g, g.pad)};
}

// The layouts the primitives compute in. Weights: whichever the primitive prefers (they are
// small). Activations: channels last (NHWC): oneDNN's direct kernels run on it (plain NCHW
// takes its slower im2col + GEMM path), it is one cheap transpose from Janus' NCHW (none with
// one channel, as a network's grayscale input), and unlike the blocked layouts oneDNN would pick
// (nChw8c) it needs no costly conversion per call and never pads one input channel to eight.
// bench/conv_vs_onednn.cc compares the layouts. Likewise NWC and NDHWC for 1 and 3 axes.
dnnl::memory::desc any_layout(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), dt::f32, tag::any);
}
dnnl::memory::desc channels_last(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), dt::f32, last_tag(static_cast<int>(md.dims().size()) - 2));
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
  mutable std::atomic<bool> ran{false};  // settle_after_first_run

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

// Runs `c` on the arrays at `ptrs` (one per operand, in the operands' order). With
// `outputs_as_computed`, the outputs are written in the primitive's own layout (Operand::internal)
// at their pointers, unconverted.
template <typename Prim>
void execute(const Cached<Prim>& c, std::initializer_list<const void*> ptrs,
             bool outputs_as_computed = false) {
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
    if (op.output && outputs_as_computed) {
      args[op.arg] = dnnl::memory(op.internal, eng, const_cast<void*>(p));
      ++i;
      continue;
    }
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
    if (op.reorder && op.output && !outputs_as_computed) {
      op.reorder->execute(stream, outputs[i].first, outputs[i].second);
      ++i;
    }
  }
  stream.wait();
  settle_after_first_run(c.ran);
}

size_t count(const dnnl::memory::desc& md) { return md.get_size() / sizeof(float); }

// A convolution of fewer multiply-adds than a parallel product (kParallelGemmMacs) runs on one
// thread, as the product does, whichever path computes it (oneDNN's primitives and Janus's own
// loops: parallel_for keeps to the guard's count): a second OpenMP thread's start and join cost
// more than it saves, and after an idle spell its wake-up can land on the first thread's core.
// The guard spans the primitive's lookup as well as its run: the cache keys primitives by the
// thread count, which oneDNN fixes when it builds one.
ScopedOmpThreads conv_team(const ConvGeom& g) {
  return ScopedOmpThreads::one_thread_if(g.macs() < kParallelGemmMacs);
}

// The activation and the pooling are not part of the primitive (conv_forward applies them), so
// every activation and pooling shares one.
const Cached<dnnl::convolution_forward>& cached_forward(ConvGeom g) {
  g.activation = Activation::kNone;
  g.avg_pool_2x2 = false;
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

// Direct loops. Every (output position, tap) pair visits `tap(y index, x index, weight index)`
// with the input position in range; the three passes differ only in what they accumulate. The
// unused leading spatial axes have extent 1 (see ConvGeom).
template <typename Tap>
void for_each_tap(const ConvGeom& g, Tap tap) {
  const int64_t og = g.o / g.groups, cg = g.c / g.groups;
  const auto& [id, ih, iw] = g.in;
  const auto& [kd, kh, kw] = g.k;
  const auto& [od, oh, ow] = g.out;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t c0 = (oc / og) * cg;
      for (int64_t oz = 0; oz < od; ++oz) {
        for (int64_t oy = 0; oy < oh; ++oy) {
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t yi = (((n * g.o + oc) * od + oz) * oh + oy) * ow + ox;
            for (int64_t ic = 0; ic < cg; ++ic) {
              for (int64_t kz = 0; kz < kd; ++kz) {
                const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dil[0];
                if (iz < 0 || iz >= id) continue;
                for (int64_t ky = 0; ky < kh; ++ky) {
                  const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dil[1];
                  if (iy < 0 || iy >= ih) continue;
                  for (int64_t kx = 0; kx < kw; ++kx) {
                    const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dil[2];
                    if (ix < 0 || ix >= iw) continue;
                    tap(yi, (((n * g.c + c0 + ic) * id + iz) * ih + iy) * iw + ix,
                        (((oc * cg + ic) * kd + kz) * kh + ky) * kw + kx);
                  }
                }
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
  const int64_t plane = g.out_size();
  for (int64_t i = 0; i < g.n * g.o * plane; ++i) y[i] = b[(i / plane) % g.o];
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  for (int64_t i = 0; i < g.n * g.o * plane; ++i) y[i] = post_op_value(g.activation, y[i]);
}

template <typename T>
void backward_data_loop(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  for (int64_t i = 0; i < g.n * g.c * g.in_size(); ++i) dx[i] = T(0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += dy[yi] * w[wi]; });
}

template <typename T>
void backward_weight_loop(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  for (int64_t i = 0; i < g.o * (g.c / g.groups) * g.k_size(); ++i) dw[i] = T(0);
  for_each_tap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += x[xi] * dy[yi]; });
}

template <typename T>
void add_input_bias(const ConvGeom& g, const T* b, T* x) {
  const int64_t plane = g.in_size();
  for (int64_t i = 0; i < g.n * g.c * plane; ++i) x[i] += b[(i / plane) % g.c];
}

// conv_forward with g.avg_pool_2x2. oneDNN's output stays in its channels-last layout, and each
// image's is activated and pooled while in cache, straight into y (channels first): no
// conversion of the whole output to NCHW, no second pass over it. The other paths pool the
// unpooled result plane by plane (the single-channel kernel pools each image itself).
void pooled_forward(const ConvGeom& g, DType dtype, const void* x, const void* weight,
                    const void* bias, void* y, const RunContext& ctx) {
  ConvGeom unpooled = g;
  unpooled.avg_pool_2x2 = false;
  const int64_t oh = g.out[1] / 2, ow = g.out[2] / 2;
  const int64_t image = g.o * g.out_size();
  if (conv_uses_onednn(g, dtype)) {
    const auto team = conv_team(g);
    if (conv_single_channel_applies(g)) {
      conv_single_channel(g, static_cast<const float*>(x), static_cast<const float*>(weight),
                          static_cast<const float*>(bias), static_cast<float*>(y), ctx);
      return;
    }
    thread_local std::vector<float> computed;
    computed.resize(static_cast<size_t>(g.n * image));
    execute(cached_forward(g), {x, weight, bias, computed.data()}, /*outputs_as_computed=*/true);
    // A pointer, not the thread-local name, for the kernel's other threads.
    float* all = computed.data();
    float* out = static_cast<float*>(y);
    parallel_for(
        g.n, ctx,
        [&](int64_t lo, int64_t hi) {
          for (int64_t n = lo; n < hi; ++n) {
            float* t = all + n * image;  // [height, width, channels]: channels last
            post_op_block(g.activation, t, image);
            avg_pool_2x2_channels_last(t, g.out[2], g.o, out + n * g.o * oh * ow, oh, ow);
          }
        },
        image);
    return;
  }
  auto pool_planes = [&]<typename T>(const T* in, T* out) {
    for (int64_t p = 0; p < g.n * g.o; ++p) {
      avg_pool_2x2_rows(in + p * g.out_size(), g.out[2], out + p * oh * ow, oh, ow);
    }
  };
  if (dtype == DType::kFloat64) {
    std::vector<double> full(static_cast<size_t>(g.n * image));
    forward_loop(unpooled, static_cast<const double*>(x), static_cast<const double*>(weight),
                 static_cast<const double*>(bias), full.data());
    pool_planes(full.data(), static_cast<double*>(y));
  } else {
    std::vector<float> full(static_cast<size_t>(g.n * image));
    forward_loop(unpooled, static_cast<const float*>(x), static_cast<const float*>(weight),
                 static_cast<const float*>(bias), full.data());
    pool_planes(full.data(), static_cast<float*>(y));
  }
}

constexpr std::array<std::string_view, 4> kForward = {"", "conv1d", "conv2d", "conv3d"};
constexpr std::array<std::string_view, 4> kBackwardData = {
    "", "conv1d_backward_data", "conv2d_backward_data", "conv3d_backward_data"};
constexpr std::array<std::string_view, 4> kBackwardWeight = {
    "", "conv1d_backward_weight", "conv2d_backward_weight", "conv3d_backward_weight"};
constexpr std::array<std::string_view, 4> kTranspose = {"", "conv1d_transpose", "conv2d_transpose",
                                                        "conv3d_transpose"};

const char* axis_names(int dims) {
  return dims == 1 ? "width" : dims == 2 ? "height, width" : "depth, height, width";
}

}  // namespace

Shape ConvGeom::x_shape() const { return Shape(with_spatial(*this, n, c, in)); }
Shape ConvGeom::weight_shape() const { return Shape(with_spatial(*this, o, c / groups, k)); }
Shape ConvGeom::y_shape() const { return Shape(with_spatial(*this, n, o, out)); }
Shape ConvGeom::result_shape() const {
  if (!avg_pool_2x2) return y_shape();
  return Shape{n, o, out[1] / 2, out[2] / 2};
}

std::string_view conv_op_name(std::string_view kind, int dims) {
  JANUS_CHECK(dims >= 1 && dims <= kMaxConvDims, InternalError,
              "conv_op_name: {} spatial axes, expected 1 to 3", dims);
  const size_t d = static_cast<size_t>(dims);
  if (kind == "forward") return kForward[d];
  if (kind == "backward_data") return kBackwardData[d];
  if (kind == "backward_weight") return kBackwardWeight[d];
  JANUS_CHECK(kind == "transpose", InternalError, "conv_op_name: unknown kind '{}'", kind);
  return kTranspose[d];
}

std::vector<AttrDef> conv_attrs(int dims, std::vector<AttrDef> extra) {
  // The docs are views: literals, one per number of axes.
  static constexpr std::array<std::string_view, 4> kStride = {
      "", "step (width)", "step (height, width), or one for both",
      "step (depth, height, width), or one for every axis"};
  static constexpr std::array<std::string_view, 4> kPadding = {
      "", "zeros added on each side (width)", "zeros added on each side (height, width)",
      "zeros added on each side (depth, height, width)"};
  static constexpr std::array<std::string_view, 4> kDilation = {
      "", "spacing of the kernel taps (width)", "spacing of the kernel taps (height, width)",
      "spacing of the kernel taps (depth, height, width)"};
  const size_t d = static_cast<size_t>(dims);
  const std::vector<int64_t> ones(d, 1), zeros(d, 0);
  std::vector<AttrDef> attrs = {{"stride", AttrType::kInts, ones, kStride[d]},
                                {"padding", AttrType::kInts, zeros, kPadding[d]},
                                {"dilation", AttrType::kInts, ones, kDilation[d]},
                                {"groups", AttrType::kInt, int64_t{1},
                                 "input and output channels split into this many groups"}};
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  return attrs;
}

std::vector<int64_t> spatial_attr(std::string_view op, std::string_view attr, int dims,
                                  const std::vector<int64_t>& v, int64_t min_value) {
  const size_t n = static_cast<size_t>(dims);
  JANUS_CHECK(v.size() == 1 || v.size() == n, ValueError,
              "{}: {} has {} values [{}], expected 1 or {} ({})", op, attr, v.size(),
              fmt::join(v, ", "), dims, axis_names(dims));
  std::vector<int64_t> out = v.size() == 1 ? std::vector<int64_t>(n, v[0]) : v;
  for (int64_t e : out) {
    JANUS_CHECK(e >= min_value, ValueError, "{}: {} is [{}], expected values >= {}", op, attr,
                fmt::join(v, ", "), min_value);
  }
  return out;
}

std::vector<int64_t> spatial_extents(const Shape& s) {
  std::vector<int64_t> e;
  for (int i = 2; i < s.ndim(); ++i) e.push_back(s[i]);
  return e;
}

ConvGeom conv_geometry(std::string_view op, int dims, const Shape& x, const Shape& weight,
                       const ConvAttrs& attrs) {
  JANUS_CHECK(x.ndim() == dims + 2, ShapeError,
              "{}: input has shape {}, expected {} dimensions [batch, channels, {}]", op, x,
              dims + 2, axis_names(dims));
  JANUS_CHECK(
      weight.ndim() == dims + 2, ShapeError,
      "{}: weight has shape {}, expected {} dimensions [out_channels, in_channels / groups, "
      "kernel ({})]",
      op, weight, dims + 2, axis_names(dims));
  const auto stride = spatial_attr(op, "stride", dims, attrs.stride, 1);
  const auto padding = spatial_attr(op, "padding", dims, attrs.padding, 0);
  const auto dilation = spatial_attr(op, "dilation", dims, attrs.dilation, 1);
  const int64_t groups = attrs.groups;
  JANUS_CHECK(groups >= 1, ValueError, "{}: groups is {}, expected at least 1", op, groups);
  JANUS_CHECK(x[1] % groups == 0 && weight[0] % groups == 0, ValueError,
              "{}: {} input channels and {} output channels must both divide into {} groups", op,
              x[1], weight[0], groups);
  JANUS_CHECK(weight[1] * groups == x[1], ShapeError,
              "{}: input {} has {} channels but weight {} expects {} ({} per group x {} groups)",
              op, x, x[1], weight, weight[1] * groups, weight[1], groups);
  ConvGeom g;
  g.dims = dims;
  g.n = x[0];
  g.c = x[1];
  g.o = weight[0];
  g.groups = groups;
  g.in.fill(1);
  g.k.fill(1);
  g.stride.fill(1);
  g.dil.fill(1);
  g.pad.fill(0);
  bool fits = true;
  for (int i = 0; i < dims; ++i) {
    const size_t at = static_cast<size_t>(kMaxConvDims - dims + i);
    const size_t a = static_cast<size_t>(i);
    g.in[at] = x[i + 2];
    g.k[at] = weight[i + 2];
    g.stride[at] = stride[a];
    g.pad[at] = padding[a];
    g.dil[at] = dilation[a];
    fits = fits && g.k[at] >= 1 && g.in[at] + 2 * g.pad[at] >= (g.k[at] - 1) * g.dil[at] + 1;
  }
  JANUS_CHECK(fits, ShapeError,
              "{}: kernel {} (dilation [{}]) does not fit input {} with padding [{}]", op,
              Shape(spatial_extents(weight)), fmt::join(dilation, ", "), Shape(spatial_extents(x)),
              fmt::join(padding, ", "));
  for (size_t i = 0; i < kMaxConvDims; ++i) {
    g.out[i] = (g.in[i] + 2 * g.pad[i] - (g.k[i] - 1) * g.dil[i] - 1) / g.stride[i] + 1;
  }
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
  return dtype == DType::kFloat32 && g.n > 0 && g.c > 0 && g.o > 0 && g.in_size() > 0;
}

void prepare_conv_forward(const ConvGeom& g) {
  if (conv_uses_onednn(g, DType::kFloat32) && !conv_single_channel_applies(g)) {
    const auto team = conv_team(g);
    cached_forward(g);
  }
}
void prepare_conv_backward_data(const ConvGeom& g) {
  if (!conv_uses_onednn(g, DType::kFloat32)) return;
  const auto team = conv_team(g);
  if (conv_gemm_backward_data_applies(g)) {
    prepare_conv_gemm_backward_data(g);
  } else {
    cached_backward_data(g);
  }
}
void prepare_conv_backward_weight(const ConvGeom& g) {
  if (conv_uses_onednn(g, DType::kFloat32) && !conv_single_channel_backward_weight_applies(g)) {
    const auto team = conv_team(g);
    cached_backward_weight(g);
  }
}

void conv_forward(const ConvGeom& g, DType dtype, const void* x, const void* weight,
                  const void* bias, void* y, const RunContext& ctx) {
  if (g.avg_pool_2x2) {
    pooled_forward(g, dtype, x, weight, bias, y, ctx);
    return;
  }
  if (dtype == DType::kFloat64) {
    forward_loop(g, static_cast<const double*>(x), static_cast<const double*>(weight),
                 static_cast<const double*>(bias), static_cast<double*>(y));
  } else if (!conv_uses_onednn(g, dtype)) {
    forward_loop(g, static_cast<const float*>(x), static_cast<const float*>(weight),
                 static_cast<const float*>(bias), static_cast<float*>(y));
  } else {
    const auto team = conv_team(g);
    if (conv_single_channel_applies(g)) {
      conv_single_channel(g, static_cast<const float*>(x), static_cast<const float*>(weight),
                          static_cast<const float*>(bias), static_cast<float*>(y), ctx);
    } else {
      execute(cached_forward(g), {x, weight, bias, y});
      post_op_in_place(g.activation, static_cast<float*>(y), g.n * g.o * g.out_size(), ctx);
    }
  }
}

void conv_backward_data(const ConvGeom& g, DType dtype, const void* dy, const void* weight,
                        void* dx, const RunContext& ctx) {
  if (dtype == DType::kFloat64) {
    backward_data_loop(g, static_cast<const double*>(dy), static_cast<const double*>(weight),
                       static_cast<double*>(dx));
  } else if (!conv_uses_onednn(g, dtype)) {
    backward_data_loop(g, static_cast<const float*>(dy), static_cast<const float*>(weight),
                       static_cast<float*>(dx));
  } else {
    const auto team = conv_team(g);
    if (conv_gemm_backward_data_applies(g)) {
      conv_gemm_backward_data(g, static_cast<const float*>(dy), static_cast<const float*>(weight),
                              static_cast<float*>(dx), ctx);
    } else {
      execute(cached_backward_data(g), {dy, weight, dx});
    }
  }
}

void conv_backward_weight(const ConvGeom& g, DType dtype, const void* x, const void* dy,
                          void* dweight, const RunContext& ctx) {
  if (dtype == DType::kFloat64) {
    backward_weight_loop(g, static_cast<const double*>(x), static_cast<const double*>(dy),
                         static_cast<double*>(dweight));
  } else if (!conv_uses_onednn(g, dtype)) {
    backward_weight_loop(g, static_cast<const float*>(x), static_cast<const float*>(dy),
                         static_cast<float*>(dweight));
  } else {
    const auto team = conv_team(g);
    if (conv_single_channel_backward_weight_applies(g)) {
      conv_single_channel_backward_weight(g, static_cast<const float*>(x),
                                          static_cast<const float*>(dy),
                                          static_cast<float*>(dweight), ctx);
    } else {
      execute(cached_backward_weight(g), {x, dy, dweight});
    }
  }
}

}  // namespace janus::ops

namespace janus::ops {

void conv_add_input_bias(const ConvGeom& g, DType dtype, const void* bias, void* x) {
  if (dtype == DType::kFloat64) {
    add_input_bias(g, static_cast<const double*>(bias), static_cast<double*>(x));
  } else {
    add_input_bias(g, static_cast<const float*>(bias), static_cast<float*>(x));
  }
}

NDArray invoke_conv(int dims, const NDArray& x, const NDArray& weight, const NDArray& bias,
                    const ConvAttrs& a) {
  return invoke(get_op(conv_op_name("forward", dims)), {x, weight, bias},
                {a.stride, a.padding, a.dilation, a.groups})[0];
}

NDArray invoke_conv_backward_data(int dims, const NDArray& dy, const NDArray& weight,
                                  const std::vector<int64_t>& input_size, const ConvAttrs& a) {
  return invoke(get_op(conv_op_name("backward_data", dims)), {dy, weight},
                {a.stride, a.padding, a.dilation, a.groups, input_size})[0];
}

NDArray invoke_conv_backward_weight(int dims, const NDArray& x, const NDArray& dy,
                                    const std::vector<int64_t>& kernel_size, const ConvAttrs& a,
                                    NDArray out) {
  return invoke_one_to(get_op(conv_op_name("backward_weight", dims)), {x, dy},
                       {a.stride, a.padding, a.dilation, a.groups, kernel_size}, std::move(out));
}

}  // namespace janus::ops
