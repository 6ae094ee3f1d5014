// The specification registry and reference helpers.
#include "op_spec.h"

#include <cmath>

#include "janus/base/error.h"

namespace janus::testing {

namespace {
std::vector<OpSpec>& specs() {
  static auto* s = new std::vector<OpSpec>();
  return *s;
}
}  // namespace

void register_op_spec(OpSpec spec) { specs().push_back(std::move(spec)); }
const std::vector<OpSpec>& op_specs() { return specs(); }

RefTensor ref_zeros(const Shape& shape) {
  return RefTensor{shape, std::vector<double>(static_cast<size_t>(shape.numel()), 0.0)};
}

RefTensor ref_map(const RefTensor& a, const std::function<double(double)>& f) {
  RefTensor out = a;
  for (double& v : out.data) v = f(v);
  return out;
}

RefTensor ref_broadcast(const RefTensor& a, const RefTensor& b,
                        const std::function<double(double, double)>& f) {
  const int nd = std::max(a.shape.ndim(), b.shape.ndim());
  std::vector<int64_t> dims(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    const int ia = a.shape.ndim() - nd + i, ib = b.shape.ndim() - nd + i;
    const int64_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
    dims[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  RefTensor out = ref_zeros(Shape(dims));
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  for (int64_t o = 0; o < out.size(); ++o) {
    int64_t rem = o;
    for (int d = nd - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % dims[static_cast<size_t>(d)];
      rem /= dims[static_cast<size_t>(d)];
    }
    auto offset = [&](const RefTensor& t) {
      int64_t off = 0;
      for (int i = 0; i < t.shape.ndim(); ++i) {
        const int64_t e = t.shape[i];
        off = off * e + (e == 1 ? 0 : idx[static_cast<size_t>(nd - t.shape.ndim() + i)]);
      }
      return off;
    };
    out[o] = f(a[offset(a)], b[offset(b)]);
  }
  return out;
}

double ref_post_op(ops::Activation a, double x) {
  switch (a) {
    case ops::Activation::kNone:
      return x;
    case ops::Activation::kRelu:
      return x < 0 ? 0.0 : x;
    case ops::Activation::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case ops::Activation::kTanh:
      return std::tanh(x);
    default:
      break;
  }
  JANUS_THROW(InternalError, "ref_post_op: '{}' is not a post-op activation",
              ops::activation_name(a));
}

}  // namespace janus::testing
