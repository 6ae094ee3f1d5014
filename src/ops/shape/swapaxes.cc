// swapaxes(x, dim1, dim2): x with two axes exchanged (MXNet's SwapAxis, NumPy's swapaxes).
#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

struct SwapAxesAttrs {
  int64_t dim1 = 0;
  int64_t dim2 = 0;
  static constexpr auto fields() {
    return std::tuple{field("dim1", &SwapAxesAttrs::dim1), field("dim2", &SwapAxesAttrs::dim2)};
  }
  static SwapAxesAttrs from(const Attrs& attrs) { return read_attrs<SwapAxesAttrs>(attrs); }
};

// The permutation that exchanges the two axes of the call (each normalized and checked).
std::vector<int64_t> swap_permutation(const Attrs& attrs, int ndim) {
  const SwapAxesAttrs a = SwapAxesAttrs::from(attrs);
  const int d1 = normalize_axis("swapaxes", a.dim1, ndim);
  const int d2 = normalize_axis("swapaxes", a.dim2, ndim);
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[static_cast<size_t>(d1)], perm[static_cast<size_t>(d2)]);
  return perm;
}

std::vector<TensorSpec> infer_swapaxes(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const Shape& s = args.inputs[0].shape;
  std::vector<int64_t> dims;
  for (int64_t p : swap_permutation(args.attrs, s.ndim())) dims.push_back(s[static_cast<int>(p)]);
  out.shape = Shape(std::move(dims));
  return {out};
}

void swapaxes_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  std::vector<int64_t> in_strides;
  for (int64_t p : swap_permutation(args.attrs, x.ndim())) {
    in_strides.push_back(strides[static_cast<size_t>(p)]);
  }
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    gather_strided<T>(x.data<T>(), 0, in_strides, args.out(0).data<T>(), args.out(0).shape(),
                      args.ctx);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "swapaxes",
    .doc = "x with axes dim1 and dim2 exchanged (negative from the end): y.shape is x.shape "
           "with those two extents swapped.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"dim1", AttrType::kInt, int64_t{0}, "first axis, negative from the end"},
              {"dim2", AttrType::kInt, int64_t{0}, "second axis, negative from the end"}},
    .attr_fields = attr_fields<SwapAxesAttrs>(),
    .infer = infer_swapaxes,
    .kernels = {{DeviceType::kCPU, swapaxes_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // Exchanging the same two axes again takes dy back to x's order.
      static const OpDef& op = get_op("swapaxes");
      return {invoke(op, {g.dy(0)}, g.attrs)[0]};
    },
});

}  // namespace janus::ops
