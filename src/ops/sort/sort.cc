// sort(x, axis, descending): x's elements in order along one axis (order.h).
#include "janus/ops/sort.h"

#include "janus/ops/ops.h"

#include "order.h"
#include "sort_attrs.h"

namespace janus::ops {
namespace {

std::vector<TensorSpec> infer_sort(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  RowLayout::of("sort", x.shape, SortAttrs::from(args.attrs).axis);
  return {x};
}

// Values only: each row's keys are sorted directly (no positions, no indirection). NaNs move
// to their end first, then a stable sort of the numbers keeps the order of the elements that
// compare equal yet differ (-0.0 and 0.0), as sorting by position would.
template <typename T>
void sort_row(const T* in, T* out, int64_t stride, int64_t n, bool descending,
              std::vector<OrderKey<T>>& keys) {
  using K = OrderKey<T>;
  keys.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) keys[static_cast<size_t>(j)] = static_cast<K>(in[j * stride]);
  auto numbers_begin = keys.begin(), numbers_end = keys.end();
  if constexpr (std::is_floating_point_v<K>) {
    auto is_nan = [](K v) { return std::isnan(v); };
    auto is_number = [](K v) { return !std::isnan(v); };
    if (descending) {
      numbers_begin = std::stable_partition(keys.begin(), keys.end(), is_nan);
    } else {
      numbers_end = std::stable_partition(keys.begin(), keys.end(), is_number);
    }
  }
  if (descending) {
    std::stable_sort(numbers_begin, numbers_end, [](K a, K b) { return b < a; });
  } else {
    std::stable_sort(numbers_begin, numbers_end);
  }
  for (int64_t j = 0; j < n; ++j) out[j * stride] = static_cast<T>(keys[static_cast<size_t>(j)]);
}

void sort_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const SortAttrs a = SortAttrs::from(args.attrs);
  const RowLayout L = RowLayout::of("sort", x.shape(), a.axis);
  dispatch_dtype(x.dtype(), [&]<typename T>() {
    const T* in = x.data<T>();
    T* out = args.out(0).data<T>();
    parallel_for(
        L.rows(), args.ctx,
        [&](int64_t lo, int64_t hi) {
          std::vector<OrderKey<T>> keys;
          for (int64_t r = lo; r < hi; ++r) {
            sort_row(in + L.at(r, 0), out + L.at(r, 0), L.inner, L.n, a.descending, keys);
          }
        },
        L.n * 16);
  });
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "sort",
    .doc = "x's elements in order along `axis`: ascending with NaN last (NumPy's order), or "
           "descending with NaN first; equal elements keep their order (stable).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axis", AttrType::kInt, int64_t{-1}, "axis to sort along, negative from the end"},
              {"descending", AttrType::kBool, false, "largest first"}},
    .attr_fields = attr_fields<SortAttrs>(),
    .infer = infer_sort,
    .kernels = {{DeviceType::kCPU, sort_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      // y[j] = x[idx[j]]: dy[j] goes back to position idx[j]. The positions are not kept by the
      // forward call (np.sort returns values only), so the rule orders x again.
      const SortAttrs a = SortAttrs::from(g.attrs);
      const RowLayout L = RowLayout::of("sort", g.x(0).shape(), a.axis);
      const NDArray idx = argsort(g.x(0), L.axis, a.descending, DType::kInt64);
      return {scatter_along_axis(g.dy(0), idx, L.axis, L.n)};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray sort(const NDArray& x, int64_t axis, bool descending) {
  static const ops::OpDef& op = ops::get_op("sort");
  return ops::invoke(op, {x}, {axis, descending})[0];
}
}  // namespace janus
