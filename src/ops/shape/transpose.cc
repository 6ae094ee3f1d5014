// transpose(x, axes): the axes of x permuted (reversed when `axes` is empty).
#include <fmt/ranges.h>

#include "janus/ops/ops.h"

#include "layout.h"
#include "shape_attrs.h"

namespace janus::ops {
namespace {

// The permutation of the call, normalised; throws ValueError unless it is one of [0, ndim).
std::vector<int64_t> resolve_permutation(const std::vector<int64_t>& axes, int ndim) {
  std::vector<int64_t> perm;
  if (axes.empty()) {
    for (int i = ndim - 1; i >= 0; --i) perm.push_back(i);
    return perm;
  }
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  bool valid = static_cast<int>(axes.size()) == ndim;
  for (int64_t a : axes) {
    const int64_t p = a < 0 ? a + ndim : a;
    valid = valid && p >= 0 && p < ndim && !seen[static_cast<size_t>(p)];
    if (valid) seen[static_cast<size_t>(p)] = true;
    perm.push_back(p);
  }
  JANUS_CHECK(valid, ValueError,
              "transpose: axes {} is not a permutation of the {} axes of the input, expected each "
              "of [0, {}) once",
              axes, ndim, ndim);
  return perm;
}

void transpose_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const std::vector<int64_t> perm = resolve_permutation(AxesAttrs::from(args.attrs).axes, x.ndim());
  const std::vector<int64_t> strides = contiguous_strides(x.shape());
  std::vector<int64_t> in_strides;
  for (int64_t p : perm) in_strides.push_back(strides[static_cast<size_t>(p)]);
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    gather_strided<T>(x.data<T>(), 0, in_strides, args.out(0).data<T>(), args.out(0).shape(),
                      args.ctx);
  });
}

std::vector<TensorSpec> infer_transpose(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  const Shape& s = args.inputs[0].shape;
  std::vector<int64_t> dims;
  for (int64_t p : resolve_permutation(AxesAttrs::from(args.attrs).axes, s.ndim())) {
    dims.push_back(s[static_cast<int>(p)]);
  }
  out.shape = Shape(std::move(dims));
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "transpose",
    .doc = "The axes of x permuted: y.shape[i] = x.shape[axes[i]]; reversed when axes is empty.",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "permutation of the axes, negative from the end"}},
    .attr_fields = attr_fields<AxesAttrs>(),
    .infer = infer_transpose,
    .kernels = {{DeviceType::kCPU, transpose_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // The inverse permutation takes dy back to x's axis order.
      const std::vector<int64_t> perm =
          resolve_permutation(AxesAttrs::from(g.attrs).axes, g.x(0).ndim());
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      return {transpose(g.dy(0), inverse)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray transpose(const NDArray& x, std::vector<int64_t> axes) {
  static const ops::OpDef& op = ops::get_op("transpose");
  return ops::invoke(op, {x}, {std::move(axes)})[0];
}
}  // namespace janus
