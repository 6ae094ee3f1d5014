// prod(x, axes, keepdims): the product over the given axes (all when empty).
#include "reduce_grad.h"

namespace janus::ops {
namespace {

void prod_cpu(const KernelArgs& args) {
  const ReducePlan plan = plan_reduce(args.in(0).shape(), ReduceAttrs::from(args.attrs).axes);
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    using A = Accum<T>;
    reduce_loop<T>(
        args.in(0).data<T>(), args.out(0).data<T>(), plan, A(1),
        [](A acc, A v) {
          // Integers wrap like their unsigned counterpart instead of overflowing (UB).
          if constexpr (std::is_integral_v<A>) {
            return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
          } else {
            return acc * v;
          }
        },
        [](A acc, int64_t) { return acc; }, args.ctx);
  });
}

// d prod / d x_i is the product of the other elements, computed without dividing (zeros are
// fine): each row of R elements becomes an [R, R] matrix with the diagonal set to 1, whose row
// products are the R partial products. O(R^2) memory per row.
std::vector<NDArray> prod_grad(const GradArgs& g) {
  const NDArray& x = g.x(0);
  if (x.size() == 0) return {zeros(x.shape(), x.dtype(), x.device())};
  const FoldedAxes f = fold_reduced_axes("prod", x, ReduceAttrs::from(g.attrs).axes);
  const int64_t o = f.outer, r = f.reduced;
  const DType dt = x.dtype();
  const NDArray eye =
      reshape(scatter_add(zeros(Shape{r * r}, dt, x.device()),
                          arange(0, static_cast<double>(r * r), static_cast<double>(r + 1),
                                 DType::kInt64, x.device()),
                          ones(Shape{r}, dt, x.device()), 0),
              Shape{r, r});
  const NDArray off_diagonal = add(mul(eye, -1.0), 1.0);
  // others[o, i, j] = x2[o, j] for j != i, 1 for j == i.
  const NDArray rows = broadcast_to(reshape(f.x2, Shape{o, 1, r}), Shape{o, r, r});
  const NDArray others = add(mul(rows, off_diagonal), eye);
  const NDArray g2 = mul(prod(others, {2}), reshape(g.dy(0), Shape{o, 1}));
  return {unfold_reduced_axes(g2, f)};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "prod",
    .doc = "Product over `axes` (every axis when empty); keepdims keeps them as extent 1.\n\n"
           "The empty product is 1. The gradient handles zeros exactly (no division).",
    .inputs = {"x"},
    .outputs = {"y"},
    .attrs = {{"axes", AttrType::kInts, std::vector<int64_t>{},
               "axes to reduce, negative from the end"},
              {"keepdims", AttrType::kBool, false, "keep reduced axes with extent 1"}},
    .attr_fields = attr_fields<ReduceAttrs>(),
    .infer = infer_reduce,
    .kernels = {{DeviceType::kCPU, prod_cpu}},
    .grad = prod_grad,
    .fusion = FusionClass::kReduction,
});

}  // namespace janus::ops

namespace janus {
NDArray prod(const NDArray& x, std::vector<int64_t> axes, bool keepdims) {
  static const ops::OpDef& op = ops::get_op("prod");
  return ops::invoke(op, {x}, {std::move(axes), keepdims})[0];
}
}  // namespace janus
