// topk(x, axis, k, ret_typ, is_ascend, dtype): MXNet's k largest (or smallest) elements along
// one axis, in sort's order (order.h).
#include <array>
#include <string_view>

#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "order.h"
#include "sort_attrs.h"

namespace janus::ops {
namespace {

constexpr std::array<std::string_view, 4> kRetTypes = {"value", "indices", "mask", "both"};

// What output 0 holds.
enum class RetTyp { kValue, kIndices, kMask, kBoth };

RetTyp parse_ret_typ(const std::string& s) {
  for (size_t i = 0; i < kRetTypes.size(); ++i) {
    if (s == kRetTypes[i]) return static_cast<RetTyp>(i);
  }
  JANUS_THROW(ValueError,
              "topk: ret_typ is '{}', expected one of 'value', 'indices', 'mask', "
              "'both'",
              s);
}

std::vector<TensorSpec> infer_topk(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TopkAttrs a = TopkAttrs::from(args.attrs);
  const RetTyp ret = parse_ret_typ(a.ret_typ);
  const RowLayout L = RowLayout::of("topk", x.shape, a.axis);
  JANUS_CHECK(a.k >= 1 && a.k <= L.n, ValueError,
              "topk: k is {}, expected 1 <= k <= {} (the extent of axis {} of shape {})", a.k, L.n,
              a.axis, x.shape);
  check_order_index_dtype("topk", a.dtype, L.n);
  Shape picked = x.shape;
  picked[L.axis] = a.k;
  const TensorSpec indices{picked, a.dtype, x.device};
  switch (ret) {
    case RetTyp::kValue:
    case RetTyp::kBoth:
      return {TensorSpec{picked, x.dtype, x.device}, indices};
    case RetTyp::kIndices:
      return {indices, indices};
    case RetTyp::kMask:
      break;
  }
  return {x, indices};
}

void topk_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const TopkAttrs a = TopkAttrs::from(args.attrs);
  const RetTyp ret = parse_ret_typ(a.ret_typ);
  const RowLayout L = RowLayout::of("topk", x.shape(), a.axis);
  const int64_t k = a.k;
  // Positions of the picked elements: row r's j-th at offset L.at(r, j) with extent k.
  RowLayout P = L;
  P.n = k;
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    T* out0 = args.out(0).data<T>();  // used when output 0 has x's dtype (value, both, mask)
    if (ret == RetTyp::kMask) std::fill(out0, out0 + x.size(), T{});
    dispatch_index_dtype(a.dtype, [&]<typename I>() {
      I* pos = args.out(1).data<I>();
      I* pos0 = ret == RetTyp::kIndices ? args.out(0).data<I>() : nullptr;
      for_each_ordered_row(in, L, k, !a.is_ascend, args.ctx, [&](int64_t r, const int64_t* idx) {
        for (int64_t j = 0; j < k; ++j) {
          pos[P.at(r, j)] = static_cast<I>(idx[j]);
          switch (ret) {
            case RetTyp::kValue:
            case RetTyp::kBoth:
              out0[P.at(r, j)] = in[L.at(r, idx[j])];
              break;
            case RetTyp::kIndices:
              pos0[P.at(r, j)] = static_cast<I>(idx[j]);
              break;
            case RetTyp::kMask:
              out0[L.at(r, idx[j])] = T(1);
              break;
          }
        }
      });
    });
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "topk",
    .doc = "MXNet's topk: the k largest (is_ascend: smallest) elements along `axis`, in order "
           "(NaN counts as the largest; ties by position).\n\n"
           "Output y is what ret_typ names: 'value' or 'both' the values, 'indices' their "
           "positions in `dtype`, 'mask' x's shape and dtype with 1 at the chosen positions. "
           "Output indices is always the positions in `dtype` (what the gradient of the values "
           "reads): with 'indices' both outputs hold them. MXNet's operator shows y alone, and "
           "both outputs with 'both'.",
    .inputs = {"x"},
    .outputs = {"y", "indices"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to search, negative from the end"},
              {"k", AttrType::kInt, int64_t{1}, "number of elements to pick, 1 <= k <= extent"},
              {"ret_typ", AttrType::kString, std::string("indices"),
               "what y holds: value, indices, mask or both"},
              {"is_ascend", AttrType::kBool, false, "pick the smallest instead of the largest"},
              {"dtype", AttrType::kDType, DType::kFloat32,
               "element type of the positions: int32, int64, float32 or float64 (MXNet's default "
               "float32)"}},
    .attr_fields = attr_fields<TopkAttrs>(),
    .infer = infer_topk,
    .kernels = {{DeviceType::kCPU, topk_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // Values: dy[j] goes back to position indices[j]. Positions and masks are piecewise
      // constant: no gradient.
      const TopkAttrs a = TopkAttrs::from(g.attrs);
      const RetTyp ret = parse_ret_typ(a.ret_typ);
      if (ret != RetTyp::kValue && ret != RetTyp::kBoth) return {NDArray()};
      const RowLayout L = RowLayout::of("topk", g.x(0).shape(), a.axis);
      return {scatter_along_axis(g.dy(0), g.y(1), L.axis, L.n)};
    },
});

}  // namespace janus::ops

namespace janus {
std::vector<NDArray> topk(const NDArray& x, int64_t axis, int64_t k, const std::string& ret_typ,
                          bool is_ascend, DType dtype) {
  static const ops::OpDef& op = ops::get_op("topk");
  return ops::invoke(op, {x}, {axis, k, ret_typ, is_ascend, dtype});
}
}  // namespace janus
