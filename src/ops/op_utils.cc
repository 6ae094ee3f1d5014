// Shape rules shared by several operators.
#include "op_utils.h"

namespace janus::ops {

InferFn infer_same_as_input(int index) {
  return [index](const InferArgs& args) {
    // One copy of the input's spec (a braced list would copy it twice, its shape with it).
    return std::vector<TensorSpec>(1, args.inputs[static_cast<size_t>(index)]);
  };
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> out(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    const int ia = a.ndim() - nd + i;
    const int ib = b.ndim() - nd + i;
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    JANUS_CHECK(da == db || da == 1 || db == 1, ShapeError,
                "{}: shapes {} and {} cannot be broadcast together (axis {} has extents {} and "
                "{}, expected equal extents or 1)",
                op, a, b, i - nd, da, db);
    out[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(std::move(out));
}

std::vector<TensorSpec> infer_broadcast_binary(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "{}: inputs have dtypes {} and {}, expected the same dtype (cast one first)",
              args.op.name, a.dtype, b.dtype);
  // Moved in, not listed in braces: an initializer list's elements can only be copied, and with
  // them the shape's storage (an allocation on every elementwise call).
  std::vector<TensorSpec> out;
  out.push_back(TensorSpec{broadcast_shapes(args.op.name, a.shape, b.shape), a.dtype, a.device});
  return out;
}

std::vector<TensorSpec> infer_into(const InferArgs& args) {
  const TensorSpec& dst = args.inputs[0];
  const TensorSpec& src = args.inputs[1];
  JANUS_CHECK(dst.shape == src.shape, ShapeError,
              "{}: dst has shape {} but src has shape {}, expected the same shape", args.op.name,
              dst.shape, src.shape);
  JANUS_CHECK(dst.dtype == src.dtype, TypeError, "{}: dst is {} but src is {}, expected one dtype",
              args.op.name, dst.dtype, src.dtype);
  return {};
}

}  // namespace janus::ops
