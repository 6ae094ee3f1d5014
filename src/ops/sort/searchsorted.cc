// searchsorted(a, v, right): where each value of v would go into the sorted 1-D array a, by
// binary search (NumPy's searchsorted, without `sorter`, which the frontends apply with take).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "janus/ops/ops.h"
#include "janus/ops/sort.h"

#include "../op_utils.h"
#include "../typed_attrs.h"

namespace janus::ops {
namespace {

struct SearchsortedAttrs {
  bool right = false;
  static constexpr auto fields() { return std::tuple{field("right", &SearchsortedAttrs::right)}; }
  static SearchsortedAttrs from(const Attrs& attrs) { return read_attrs<SearchsortedAttrs>(attrs); }
};

std::vector<TensorSpec> infer_searchsorted(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& v = args.inputs[1];
  JANUS_CHECK(a.shape.ndim() == 1, ShapeError,
              "searchsorted: a has shape {}, expected one dimension (the sorted array)", a.shape);
  JANUS_CHECK(a.dtype == v.dtype, TypeError,
              "searchsorted: a and v have dtypes {} and {}, expected the same dtype (cast one "
              "first)",
              a.dtype, v.dtype);
  return {TensorSpec{v.shape, DType::kInt64, v.device}};
}

// sort's order (order.h): every number before NaN, NaNs equal among themselves.
template <typename T>
bool before(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    return x < y;
  } else {
    const auto dx = static_cast<double>(x), dy = static_cast<double>(y);
    return !std::isnan(dx) && (std::isnan(dy) || dx < dy);
  }
}

void searchsorted_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const NDArray& v = args.in(1);
  const bool right = SearchsortedAttrs::from(args.attrs).right;
  int64_t* out = args.out(0).data<int64_t>();
  dispatch_dtype(a.dtype(), [&]<typename T>() {
    const T* first = a.data<T>();
    const T* last = first + a.size();
    const T* values = v.data<T>();
    parallel_for(
        v.size(), args.ctx,
        [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) {
            // left: the first element not before the value; right: the first one after it.
            const T* at = right ? std::upper_bound(first, last, values[i], before<T>)
                                : std::lower_bound(first, last, values[i], before<T>);
            out[i] = at - first;
          }
        },
        64);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "searchsorted",
    .doc = "Positions (int64, v's shape) at which v's values would go into the sorted 1-D array "
           "a to keep it sorted: before equal elements, or after them when `right`; NaN sorts "
           "last, as in sort.",
    .inputs = {"a", "v"},
    .outputs = {"indices"},
    .attrs = {{"right", AttrType::kBool, false, "place each value after the equal elements"}},
    .attr_fields = attr_fields<SearchsortedAttrs>(),
    .infer = infer_searchsorted,
    .kernels = {{DeviceType::kCPU, searchsorted_cpu}},
    .not_differentiable = true,  // positions, piecewise constant
});

}  // namespace janus::ops

namespace janus {
NDArray searchsorted(const NDArray& a, const NDArray& v, bool right) {
  static const ops::OpDef& op = ops::get_op("searchsorted");
  return ops::invoke(op, {a, v}, {right})[0];
}
}  // namespace janus
