// Conformance specifications of the shape operators.
#include <algorithm>

#include "shape/mxnet_reshape.h"
#include "shape/shape_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC({.op = "reshape",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     RefTensor out = in[0];
                     out.shape =
                         resolve_reshape(in[0].shape, ops::TargetShapeAttrs::from(attrs).shape);
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{2, 3}}, {Shape{3, 2}}},
                           {{{2, 3, 4}}, {Shape{-1, 4}}},
                           {{{6}}, {Shape{1, 6, 1}}},
                           {{{}}, {Shape{1}}},
                           {{{0, 4}}, {Shape{2, 0}}}}});

using Ints = std::vector<int64_t>;

JANUS_OP_SPEC({.op = "mxnet_reshape",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     RefTensor out = in[0];
                     const auto a = ops::ReshapeCodesAttrs::from(attrs);
                     out.shape = ops::resolve_mxnet_reshape(in[0].shape, a.shape, a.reverse);
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{2, 3, 4}}, {Ints{0, -1}}},
                           {{{2, 3, 4}}, {Ints{-3, -2}}},
                           {{{6, 4}}, {Ints{-4, 2, -1, -2}}},
                           {{{2, 3, 4}}, {Ints{4, 0, 2}}},
                           {{{2, 3, 4}}, {Ints{-1, 0}, true}}}});

// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> st(static_cast<size_t>(shape.ndim()));
  int64_t s = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    st[static_cast<size_t>(i)] = s;
    s *= shape[i];
  }
  return st;
}

// out[j] = x[offset + sum_d j_d * in_strides[d]] over out_shape: every copy-like reference.
RefTensor gather_ref(const RefTensor& x, int64_t offset, const std::vector<int64_t>& in_strides,
                     const Shape& out_shape) {
  RefTensor out = ref_zeros(out_shape);
  for (int64_t e = 0; e < out.size(); ++e) {
    int64_t rem = e, src = offset;
    for (int d = out_shape.ndim() - 1; d >= 0; --d) {
      src += (rem % out_shape[d]) * in_strides[static_cast<size_t>(d)];
      rem /= out_shape[d];
    }
    out[e] = x[src];
  }
  return out;
}

int64_t wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v; }

RefTensor reshaped(RefTensor t, const Shape& s) {
  t.shape = s;
  return t;
}

JANUS_OP_SPEC({.op = "transpose",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     Ints perm = ops::AxesAttrs::from(attrs).axes;
                     if (perm.empty()) {
                       for (int i = s.ndim() - 1; i >= 0; --i) perm.push_back(i);
                     }
                     const auto st = strides_of(s);
                     Ints dims, in_strides;
                     for (int64_t p : perm) {
                       p = wrap(p, s.ndim());
                       dims.push_back(s[static_cast<int>(p)]);
                       in_strides.push_back(st[static_cast<size_t>(p)]);
                     }
                     return std::vector<RefTensor>{gather_ref(in[0], 0, in_strides, Shape(dims))};
                   },
               .samples = {{{{2, 3, 4}}, {Ints{2, 0, 1}}},
                           {{{2, 3, 4}}, {Ints{}}},
                           {{{2, 3}}, {Ints{-1, 0}}},
                           {{{}}, {Ints{}}},
                           {{{0, 3}}, {Ints{1, 0}}}}});

JANUS_OP_SPEC({.op = "swapaxes",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     Ints perm;
                     for (int i = 0; i < s.ndim(); ++i) perm.push_back(i);
                     std::swap(perm[static_cast<size_t>(wrap(attrs.get<int64_t>(0), s.ndim()))],
                               perm[static_cast<size_t>(wrap(attrs.get<int64_t>(1), s.ndim()))]);
                     const auto st = strides_of(s);
                     Ints dims, in_strides;
                     for (int64_t p : perm) {
                       dims.push_back(s[static_cast<int>(p)]);
                       in_strides.push_back(st[static_cast<size_t>(p)]);
                     }
                     return std::vector<RefTensor>{gather_ref(in[0], 0, in_strides, Shape(dims))};
                   },
               .samples = {{{{2, 3, 4}}, {int64_t{0}, int64_t{2}}},
                           {{{2, 3, 4}}, {int64_t{-1}, int64_t{1}}},
                           {{{2, 3}}, {int64_t{1}, int64_t{1}}},
                           {{{0, 3}}, {int64_t{1}, int64_t{0}}}}});

JANUS_OP_SPEC({.op = "expand_dims",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     Ints dims = in[0].shape.dims();
                     const int64_t axis =
                         wrap(ops::AxisAttrs::from(attrs).axis, in[0].shape.ndim() + 1);
                     dims.insert(dims.begin() + axis, 1);
                     return std::vector<RefTensor>{reshaped(in[0], Shape(dims))};
                   },
               .samples = {{{{2, 3}}, {int64_t{0}}},
                           {{{2, 3}}, {int64_t{-1}}},
                           {{{2, 3}}, {int64_t{1}}},
                           {{{}}, {int64_t{0}}}}});

JANUS_OP_SPEC({.op = "squeeze",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const Ints axes = ops::AxesAttrs::from(attrs).axes;
                     Ints dims;
                     for (int i = 0; i < s.ndim(); ++i) {
                       const bool listed = std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
                         return wrap(a, s.ndim()) == i;
                       });
                       if (!(axes.empty() ? s[i] == 1 : listed)) dims.push_back(s[i]);
                     }
                     return std::vector<RefTensor>{reshaped(in[0], Shape(dims))};
                   },
               .samples = {{{{1, 3, 1}}, {Ints{}}},
                           {{{1, 3, 1}}, {Ints{0}}},
                           {{{1, 3, 1}}, {Ints{-1, 0}}},
                           {{{1}}, {Ints{}}}}});

JANUS_OP_SPEC({.op = "flatten",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     const Shape& s = in[0].shape;
                     return std::vector<RefTensor>{
                         reshaped(in[0], Shape{s[0], s[0] == 0 ? 0 : in[0].size() / s[0]})};
                   },
               .samples = {{{{2, 3, 4}}, {}}, {{{5}}, {}}, {{{3, 0}}, {}}}});

JANUS_OP_SPEC({.op = "broadcast_to",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const Shape target = ops::TargetShapeAttrs::from(attrs).shape;
                     const auto st = strides_of(s);
                     Ints in_strides(static_cast<size_t>(target.ndim()), 0);
                     const int lead = target.ndim() - s.ndim();
                     for (int i = 0; i < s.ndim(); ++i) {
                       in_strides[static_cast<size_t>(lead + i)] =
                           s[i] == 1 ? 0 : st[static_cast<size_t>(i)];
                     }
                     return std::vector<RefTensor>{gather_ref(in[0], 0, in_strides, target)};
                   },
               .samples = {{{{3}}, {Shape{2, 3}}},
                           {{{2, 1}}, {Shape{2, 3}}},
                           {{{}}, {Shape{2, 2}}},
                           {{{1, 3, 1}}, {Shape{2, 3, 4}}},
                           {{{1, 3}}, {Shape{0, 3}}}}});

// Joins a and b along `axis` (stack: along a new axis of extent 1 each).
RefTensor join_ref(const RefTensor& a, const RefTensor& b, int axis) {
  Ints dims = a.shape.dims();
  dims[static_cast<size_t>(axis)] += b.shape[axis];
  RefTensor out = ref_zeros(Shape(dims));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= a.shape[i];
  for (int i = axis + 1; i < a.shape.ndim(); ++i) inner *= a.shape[i];
  const int64_t na = a.shape[axis] * inner, nb = b.shape[axis] * inner;
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < na; ++i) out[k++] = a[o * na + i];
    for (int64_t i = 0; i < nb; ++i) out[k++] = b[o * nb + i];
  }
  return out;
}

JANUS_OP_SPEC({.op = "concat",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const int axis = static_cast<int>(
                         wrap(ops::AxisAttrs::from(attrs).axis, in[0].shape.ndim()));
                     return std::vector<RefTensor>{join_ref(in[0], in[1], axis)};
                   },
               .samples = {{{{2, 3}, {4, 3}}, {int64_t{0}}},
                           {{{2, 3}, {2, 1}}, {int64_t{1}}},
                           {{{2, 0}, {2, 3}}, {int64_t{-1}}},
                           {{{2, 1, 2}, {2, 2, 2}}, {int64_t{1}}}}});

JANUS_OP_SPEC({.op = "stack",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const int axis = static_cast<int>(
                         wrap(ops::AxisAttrs::from(attrs).axis, in[0].shape.ndim() + 1));
                     Ints dims = in[0].shape.dims();
                     dims.insert(dims.begin() + axis, 1);
                     return std::vector<RefTensor>{join_ref(reshaped(in[0], Shape(dims)),
                                                            reshaped(in[1], Shape(dims)), axis)};
                   },
               .samples = {{{{2, 3}, {2, 3}}, {int64_t{0}}},
                           {{{2, 3}, {2, 3}}, {int64_t{1}}},
                           {{{2, 3}, {2, 3}}, {int64_t{-1}}},
                           {{{}, {}}, {int64_t{0}}}}});

JANUS_OP_SPEC({.op = "slice_axis",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const ops::SliceAxisAttrs a = ops::SliceAxisAttrs::from(attrs);
                     const int axis = static_cast<int>(wrap(a.axis, s.ndim()));
                     const int64_t b = wrap(a.begin, s[axis]);
                     const int64_t e = std::max(b, wrap(a.end, s[axis]));
                     Ints dims = s.dims();
                     dims[static_cast<size_t>(axis)] = e - b;
                     const auto st = strides_of(s);
                     return std::vector<RefTensor>{
                         gather_ref(in[0], b * st[static_cast<size_t>(axis)], st, Shape(dims))};
                   },
               .samples = {{{{4, 5}}, {int64_t{1}, int64_t{1}, int64_t{4}}},
                           {{{4, 5}}, {int64_t{0}, int64_t{-3}, int64_t{-1}}},
                           {{{4, 5}}, {int64_t{-1}, int64_t{3}, int64_t{3}}},
                           {{{2, 3, 4}}, {int64_t{1}, int64_t{0}, int64_t{2}}}}});

JANUS_OP_SPEC({.op = "slice",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const ops::SliceAttrs a = ops::SliceAttrs::from(attrs);
                     const Ints& begin = a.begin;
                     const Ints& end = a.end;
                     const Ints& step = a.step;
                     const auto st = strides_of(s);
                     Ints dims, in_strides;
                     int64_t offset = 0;
                     for (int i = 0; i < s.ndim(); ++i) {
                       const size_t ui = static_cast<size_t>(i);
                       const int64_t b = ui < begin.size() ? wrap(begin[ui], s[i]) : 0;
                       const int64_t e = ui < end.size() ? wrap(end[ui], s[i]) : s[i];
                       const int64_t k = ui < step.size() ? step[ui] : 1;
                       int64_t count = 0;
                       for (int64_t j = b; j < e; j += k) ++count;
                       dims.push_back(count);
                       offset += b * st[ui];
                       in_strides.push_back(k * st[ui]);
                     }
                     return std::vector<RefTensor>{
                         gather_ref(in[0], offset, in_strides, Shape(dims))};
                   },
               .samples = {{{{4, 5}}, {Ints{1, 0}, Ints{3, 5}, Ints{}}},
                           {{{4, 5}}, {Ints{0, 1}, Ints{4, 5}, Ints{2, 2}}},
                           {{{6}}, {Ints{-4}, Ints{6}, Ints{3}}},
                           {{{2, 3, 4}}, {Ints{1}, Ints{2}, Ints{}}},
                           {{{3, 4}}, {Ints{2, 0}, Ints{1, 4}, Ints{}}},
                           {{{}}, {Ints{}, Ints{}, Ints{}}}}});

JANUS_OP_SPEC({.op = "pad",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const ops::PadAttrs a = ops::PadAttrs::from(attrs);
                     const Ints& w = a.widths;
                     Ints dims;
                     for (int i = 0; i < s.ndim(); ++i) {
                       dims.push_back(s[i] + w[static_cast<size_t>(2 * i)] +
                                      w[static_cast<size_t>(2 * i + 1)]);
                     }
                     RefTensor out = ref_zeros(Shape(dims));
                     std::fill(out.data.begin(), out.data.end(), a.value);
                     const auto ost = strides_of(out.shape);
                     for (int64_t e = 0; e < in[0].size(); ++e) {
                       int64_t rem = e, dst = 0;
                       for (int d = s.ndim() - 1; d >= 0; --d) {
                         dst += (rem % s[d] + w[static_cast<size_t>(2 * d)]) *
                                ost[static_cast<size_t>(d)];
                         rem /= s[d];
                       }
                       out[dst] = in[0][e];
                     }
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{2, 3}}, {Ints{1, 0, 2, 1}}},
                           {{{3}}, {Ints{0, 2}, 1.5}},
                           {{{2, 1, 2}}, {Ints{0, 0, 1, 1, 0, 3}, -1.0}},
                           {{{}}, {Ints{}}},
                           {{{0, 2}}, {Ints{1, 1, 0, 0}}}}});

// take/scatter_add: indices in [-2, 3), valid for every sample (gathered axes have extent >= 3).
void small_indices(int index, RefTensor& t, std::mt19937& rng) {
  if (index != 1) return;
  for (double& v : t.data) v = std::uniform_int_distribution<int>(-2, 2)(rng);
}

// Shapes of take's output: x.shape[:axis] + indices.shape + x.shape[axis+1:], and loop extents.
struct TakeGeometry {
  int64_t outer = 1, n = 1, inner = 1, m = 1;
};
TakeGeometry take_geometry(const Shape& x, const Shape& index, int axis) {
  TakeGeometry g;
  for (int i = 0; i < axis; ++i) g.outer *= x[i];
  for (int i = axis + 1; i < x.ndim(); ++i) g.inner *= x[i];
  g.n = x[axis];
  g.m = index.numel();
  return g;
}

JANUS_OP_SPEC({.op = "take",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     const int axis =
                         static_cast<int>(wrap(ops::AxisAttrs::from(attrs).axis, s.ndim()));
                     Ints dims(s.begin(), s.begin() + axis);
                     dims.insert(dims.end(), in[1].shape.begin(), in[1].shape.end());
                     dims.insert(dims.end(), s.begin() + axis + 1, s.end());
                     RefTensor out = ref_zeros(Shape(dims));
                     const TakeGeometry g = take_geometry(s, in[1].shape, axis);
                     for (int64_t o = 0; o < g.outer; ++o) {
                       for (int64_t j = 0; j < g.m; ++j) {
                         const int64_t k = wrap(static_cast<int64_t>(in[1][j]), g.n);
                         for (int64_t i = 0; i < g.inner; ++i) {
                           out[(o * g.m + j) * g.inner + i] = in[0][(o * g.n + k) * g.inner + i];
                         }
                       }
                     }
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{4, 3}, {5}}, {int64_t{0}}, {DType::kFloat64, DType::kInt64}},
                           {{{2, 5}, {2, 2}}, {int64_t{1}}, {DType::kFloat64, DType::kInt32}},
                           {{{3, 2, 3}, {}}, {int64_t{-1}}, {DType::kFloat64, DType::kInt64}},
                           {{{3}, {0}}, {int64_t{0}}, {DType::kFloat64, DType::kInt64}}},
               .make_input = small_indices});

JANUS_OP_SPEC(
    {.op = "scatter_add",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
           const Shape& s = in[0].shape;
           const int axis = static_cast<int>(wrap(ops::AxisAttrs::from(attrs).axis, s.ndim()));
           RefTensor out = in[0];
           const TakeGeometry g = take_geometry(s, in[1].shape, axis);
           for (int64_t o = 0; o < g.outer; ++o) {
             for (int64_t j = 0; j < g.m; ++j) {
               const int64_t k = wrap(static_cast<int64_t>(in[1][j]), g.n);
               for (int64_t i = 0; i < g.inner; ++i) {
                 out[(o * g.n + k) * g.inner + i] += in[2][(o * g.m + j) * g.inner + i];
               }
             }
           }
           return std::vector<RefTensor>{out};
         },
     .samples = {{{{4, 3}, {5}, {5, 3}}, {int64_t{0}}, {DType::kFloat64, DType::kInt64}},
                 {{{2, 5}, {2, 2}, {2, 2, 2}}, {int64_t{1}}, {DType::kFloat64, DType::kInt32}},
                 {{{3, 2, 3}, {}, {3, 2}}, {int64_t{-1}}, {DType::kFloat64, DType::kInt64}}},
     .make_input = small_indices});

// gather_nd: positions in [-2, 2], valid for every sample (the gathered axes have extent >= 3).
JANUS_OP_SPEC({.op = "gather_nd",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     const Shape& s = in[0].shape;
                     const Shape& ix = in[1].shape;
                     const int m = static_cast<int>(ix[0]);
                     Ints dims(ix.begin() + 1, ix.end());
                     dims.insert(dims.end(), s.begin() + m, s.end());
                     RefTensor out = ref_zeros(Shape(dims));
                     const int64_t tuples = ix.numel() / m;
                     const int64_t inner =
                         s.numel() / Shape(Ints(s.begin(), s.begin() + m)).numel();
                     for (int64_t t = 0; t < tuples; ++t) {
                       int64_t row = 0;
                       for (int a = 0; a < m; ++a) {
                         row = row * s[a] + wrap(static_cast<int64_t>(in[1][a * tuples + t]), s[a]);
                       }
                       for (int64_t i = 0; i < inner; ++i)
                         out[t * inner + i] = in[0][row * inner + i];
                     }
                     return std::vector<RefTensor>{out};
                   },
               .samples = {{{{3, 4, 3}, {2, 5}}, {}, {DType::kFloat64, DType::kInt64}},
                           {{{4, 3}, {2, 2, 3}}, {}, {DType::kFloat64, DType::kInt32}},
                           {{{3, 3, 4}, {3, 2}}, {}, {DType::kFloat64, DType::kInt64}},
                           {{{3, 5}, {1}}, {}, {DType::kFloat64, DType::kInt64}},
                           {{{3, 4}, {1, 0}}, {}, {DType::kFloat64, DType::kInt64}}},
               .make_input = small_indices});

// The reference takes MXNet's rule literally: x's dims before begin, like's dims in its range,
// x's dims from end.
JANUS_OP_SPEC(
    {.op = "reshape_like",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
           auto range = [](const std::vector<int64_t>& axes, int64_t ndim) {
             auto norm = [&](int64_t a) { return a < 0 ? a + ndim : a; };
             return std::pair{axes.empty() ? 0 : norm(axes[0]),
                              axes.size() < 2 ? ndim : norm(axes[1])};
           };
           const auto& x = in[0].shape;
           const auto& like = in[1].shape;
           const auto [xb, xe] = range(attrs.get<std::vector<int64_t>>(0), x.ndim());
           const auto [lb, le] = range(attrs.get<std::vector<int64_t>>(1), like.ndim());
           std::vector<int64_t> dims(x.begin(), x.begin() + xb);
           dims.insert(dims.end(), like.begin() + lb, like.begin() + le);
           dims.insert(dims.end(), x.begin() + xe, x.end());
           RefTensor out = in[0];
           out.shape = Shape(dims);
           return std::vector<RefTensor>{out};
         },
     .samples = {{{{2, 3}, {3, 2}}, {}},
                 {{{2, 3, 4}, {24}}, {}},
                 {{{6}, {1, 6, 1}}, {}},
                 {{{0, 4}, {2, 0}}, {}},
                 {{{2, 12}, {3, 4, 5}}, {std::vector<int64_t>{1}, std::vector<int64_t>{0, 2}}},
                 {{{6, 5}, {7, 2, 3}}, {std::vector<int64_t>{0, 1}, std::vector<int64_t>{-2}}},
                 {{{4, 3}, {9}}, {std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 0}}}},
     .no_grad_inputs = {1}});

JANUS_OP_SPEC({.op = "slice_like",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const Shape& s = in[0].shape;
                     Ints dims(s.begin(), s.end());
                     Ints axes = ops::AxesAttrs::from(attrs).axes;
                     if (axes.empty()) {
                       for (int a = 0; a < s.ndim(); ++a) axes.push_back(a);
                     }
                     for (int64_t a : axes) {
                       const auto k = static_cast<size_t>(wrap(a, s.ndim()));
                       dims[k] = in[1].shape[static_cast<int>(k)];
                     }
                     return std::vector<RefTensor>{
                         gather_ref(in[0], 0, strides_of(s), Shape(dims))};
                   },
               .samples = {{{{3, 4}, {2, 3}}, {Ints{}}},
                           {{{2, 3, 4}, {1, 2}}, {Ints{0, -2}}},
                           {{{2, 3, 4}, {5, 6, 3}}, {Ints{2}}},
                           {{{2, 3}, {2, 3}}, {Ints{}}},
                           {{{2, 3}, {0, 1}}, {Ints{0, 0}}}},
               .no_grad_inputs = {1}});

}  // namespace
}  // namespace janus::testing
