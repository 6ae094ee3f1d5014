// Conformance specifications of the creation and random operators.
#include <cmath>

#include "creation/creation_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// The reference of an operator that fills the shape of its attributes S with value(S).
template <typename S>
ReferenceFn fill_with(double (*value)(const S&)) {
  return [value](const std::vector<RefTensor>&, const ops::Attrs& attrs) {
    const S a = S::from(attrs);
    RefTensor t = ref_zeros(a.shape);
    for (double& v : t.data) v = value(a);
    return std::vector<RefTensor>{t};
  };
}

// Creation operators have no inputs: the float32 run is the same call as the float64 one, so
// the samples choose the dtype through the attribute.
JANUS_OP_SPEC({.op = "zeros",
               .reference = fill_with<ops::CreationAttrs>([](const ops::CreationAttrs&) {
                 return 0.0;
               }),
               .samples = {{{}, {Shape{2, 3}, DType::kFloat64}}, {{}, {Shape{}, DType::kFloat64}}},
               .check_float32 = false});
JANUS_OP_SPEC({.op = "ones",
               .reference = fill_with<ops::CreationAttrs>([](const ops::CreationAttrs&) {
                 return 1.0;
               }),
               .samples = {{{}, {Shape{4}, DType::kFloat64}}, {{}, {Shape{0, 2}, DType::kFloat64}}},
               .check_float32 = false});
JANUS_OP_SPEC({.op = "full",
               .reference = fill_with<ops::FullAttrs>([](const ops::FullAttrs& a) {
                 return a.value;
               }),
               .samples = {{{}, {2.5, Shape{3, 2}, DType::kFloat64}}},
               .check_float32 = false});
JANUS_OP_SPEC({.op = "arange",
               .reference =
                   [](const std::vector<RefTensor>&, const ops::Attrs& attrs) {
                     const ops::ArangeAttrs a = ops::ArangeAttrs::from(attrs);
                     const double start = a.start, stop = a.stop, step = a.step;
                     const double n = std::max(0.0, std::ceil((stop - start) / step));
                     RefTensor t = ref_zeros(Shape{static_cast<int64_t>(n)});
                     for (int64_t i = 0; i < t.size(); ++i)
                       t[i] = start + static_cast<double>(i) * step;
                     return std::vector<RefTensor>{t};
                   },
               .samples = {{{}, {0.0, 5.0, 1.0, DType::kFloat64}},
                           {{}, {1.0, -2.0, -0.5, DType::kFloat64}},
                           {{}, {3.0, 3.0, 1.0, DType::kFloat64}}},
               .check_float32 = false});
// linspace: NumPy's formula (i * step + start, the endpoint exactly stop).
JANUS_OP_SPEC({.op = "linspace",
               .reference =
                   [](const std::vector<RefTensor>&, const ops::Attrs& attrs) {
                     const ops::LinspaceAttrs a = ops::LinspaceAttrs::from(attrs);
                     const double start = a.start, stop = a.stop;
                     const int64_t num = a.num;
                     const bool endpoint = a.endpoint;
                     const int64_t div = endpoint ? num - 1 : num;
                     RefTensor t = ref_zeros(Shape{num});
                     for (int64_t i = 0; i < num; ++i) {
                       t[i] = div > 0 ? start + static_cast<double>(i) * (stop - start) /
                                                    static_cast<double>(div)
                                      : start;
                     }
                     if (endpoint && num > 1) t[num - 1] = stop;
                     return std::vector<RefTensor>{t};
                   },
               .samples = {{{}, {0.0, 1.0, int64_t{5}, true, DType::kFloat64}},
                           {{}, {-2.0, 3.0, int64_t{7}, false, DType::kFloat64}},
                           {{}, {4.0, -1.0, int64_t{1}, true, DType::kFloat64}},
                           {{}, {1.0, 2.0, int64_t{0}, true, DType::kFloat64}}},
               .check_float32 = false});
JANUS_OP_SPEC({.op = "eye",
               .reference =
                   [](const std::vector<RefTensor>&, const ops::Attrs& attrs) {
                     const ops::EyeAttrs a = ops::EyeAttrs::from(attrs);
                     const int64_t n = a.n;
                     const int64_t m = a.m == -1 ? n : a.m;
                     const int64_t k = a.k;
                     RefTensor t = ref_zeros(Shape{n, m});
                     for (int64_t i = 0; i < n; ++i) {
                       for (int64_t j = 0; j < m; ++j) t[i * m + j] = j - i == k ? 1.0 : 0.0;
                     }
                     return std::vector<RefTensor>{t};
                   },
               .samples = {{{}, {int64_t{4}, int64_t{-1}, int64_t{0}, DType::kFloat64}},
                           {{}, {int64_t{3}, int64_t{5}, int64_t{2}, DType::kFloat64}},
                           {{}, {int64_t{5}, int64_t{3}, int64_t{-1}, DType::kFloat64}},
                           {{}, {int64_t{2}, int64_t{2}, int64_t{3}, DType::kFloat64}}},
               .check_float32 = false});
JANUS_OP_SPEC({.op = "random_uniform",
               .note = "random: checked by src/ops/random_test.cc (known-answer Philox vectors, "
                       "range, moments, determinism)"});
JANUS_OP_SPEC({.op = "random_normal",
               .note = "random: checked by src/ops/random_test.cc (moments, determinism)"});
JANUS_OP_SPEC({.op = "randint",
               .note = "random: checked by src/ops/random_extra_test.cc (exact draws against "
                       "the reference, range, chi-square uniformity, determinism, errors)"});
JANUS_OP_SPEC({.op = "permutation",
               .note = "random: checked by src/ops/random_extra_test.cc (a permutation, exact "
                       "Fisher-Yates reference, determinism, errors)"});

}  // namespace
}  // namespace janus::testing
