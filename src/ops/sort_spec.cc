// Conformance specifications of the ordering operators: sort, argsort, topk and
// scatter_along_axis, against a float64 reference that orders each row on the host.
#include <algorithm>
#include <numeric>
#include <random>

#include "sort/sort_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

struct Rows {
  int axis;
  int64_t outer, n, inner;
  int64_t at(int64_t r, int64_t j) const { return ((r / inner) * n + j) * inner + r % inner; }
};

Rows rows_of(const Shape& s, int64_t axis) {
  const int nd = s.ndim();
  Rows r{static_cast<int>(axis < 0 ? axis + nd : axis), 1, 0, 1};
  for (int i = 0; i < r.axis; ++i) r.outer *= s[i];
  r.n = s[r.axis];
  for (int i = r.axis + 1; i < nd; ++i) r.inner *= s[i];
  return r;
}

// Positions of row r in order (the inputs are distinct: no ties, no NaN).
std::vector<int64_t> order(const RefTensor& x, const Rows& R, int64_t r, bool descending) {
  std::vector<int64_t> p(static_cast<size_t>(R.n));
  std::iota(p.begin(), p.end(), int64_t{0});
  std::sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
    const double va = x[R.at(r, a)], vb = x[R.at(r, b)];
    return descending ? va > vb : va < vb;
  });
  return p;
}

// Distinct values on a grid with gaps of 0.25: one order, and finite differences never cross
// a tie.
void distinct(int, RefTensor& t, std::mt19937& rng) {
  std::vector<int64_t> o(static_cast<size_t>(t.size()));
  std::iota(o.begin(), o.end(), int64_t{0});
  std::shuffle(o.begin(), o.end(), rng);
  for (int64_t i = 0; i < t.size(); ++i) {
    t[i] = 0.25 * static_cast<double>(o[static_cast<size_t>(i)] - t.size() / 2) + 0.01;
  }
}

JANUS_OP_SPEC({.op = "sort",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const ops::SortAttrs a = ops::SortAttrs::from(attrs);
                     const Rows R = rows_of(in[0].shape, a.axis);
                     RefTensor y = ref_zeros(in[0].shape);
                     for (int64_t r = 0; r < R.outer * R.inner; ++r) {
                       const std::vector<int64_t> p = order(in[0], R, r, a.descending);
                       for (int64_t j = 0; j < R.n; ++j)
                         y[R.at(r, j)] = in[0][R.at(r, p[static_cast<size_t>(j)])];
                     }
                     return std::vector<RefTensor>{y};
                   },
               .samples = {{{{2, 5}}, {int64_t{-1}, false}},
                           {{{3, 4, 2}}, {int64_t{1}, true}},
                           {{{4, 3}}, {int64_t{0}, false}},
                           {{{0, 3}}, {int64_t{1}, false}}},
               .make_input = distinct});

JANUS_OP_SPEC({.op = "argsort",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const ops::ArgsortAttrs a = ops::ArgsortAttrs::from(attrs);
                     const Rows R = rows_of(in[0].shape, a.axis);
                     RefTensor y = ref_zeros(in[0].shape);
                     for (int64_t r = 0; r < R.outer * R.inner; ++r) {
                       const std::vector<int64_t> p = order(in[0], R, r, a.descending);
                       for (int64_t j = 0; j < R.n; ++j)
                         y[R.at(r, j)] = static_cast<double>(p[static_cast<size_t>(j)]);
                     }
                     return std::vector<RefTensor>{y};
                   },
               .samples = {{{{2, 5}}, {int64_t{-1}, false}},
                           {{{3, 4, 2}}, {int64_t{1}, true, DType::kInt32}},
                           {{{4, 3}}, {int64_t{0}, false, DType::kFloat32}}},
               .make_input = distinct});

JANUS_OP_SPEC(
    {.op = "topk",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
           const ops::TopkAttrs a = ops::TopkAttrs::from(attrs);
           const Rows R = rows_of(in[0].shape, a.axis);
           Shape picked = in[0].shape;
           picked[R.axis] = a.k;
           const Rows P{R.axis, R.outer, a.k, R.inner};
           RefTensor values = ref_zeros(picked), pos = ref_zeros(picked);
           RefTensor mask = ref_zeros(in[0].shape);
           for (int64_t r = 0; r < R.outer * R.inner; ++r) {
             const std::vector<int64_t> p = order(in[0], R, r, !a.is_ascend);
             for (int64_t j = 0; j < a.k; ++j) {
               const int64_t q = p[static_cast<size_t>(j)];
               values[P.at(r, j)] = in[0][R.at(r, q)];
               pos[P.at(r, j)] = static_cast<double>(q);
               mask[R.at(r, q)] = 1.0;
             }
           }
           if (a.ret_typ == "indices") return std::vector<RefTensor>{pos, pos};
           if (a.ret_typ == "mask") return std::vector<RefTensor>{mask, pos};
           return std::vector<RefTensor>{values, pos};
         },
     .samples = {{{{3, 5}}, {int64_t{-1}, int64_t{2}, std::string("value")}},
                 {{{4, 3}}, {int64_t{0}, int64_t{3}, std::string("both"), true, DType::kInt64}},
                 {{{2, 6}}, {int64_t{1}, int64_t{3}, std::string("mask")}},
                 {{{2, 3, 4}},
                  {int64_t{1}, int64_t{2}, std::string("indices"), false, DType::kInt32}}},
     .make_input = distinct});

JANUS_OP_SPEC(
    {.op = "scatter_along_axis",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
           const ops::ScatterAlongAxisAttrs a = ops::ScatterAlongAxisAttrs::from(attrs);
           const Rows S = rows_of(in[0].shape, a.axis);
           Shape out_shape = in[0].shape;
           out_shape[S.axis] = a.n;
           const Rows D{S.axis, S.outer, a.n, S.inner};
           RefTensor out = ref_zeros(out_shape);
           for (int64_t r = 0; r < S.outer * S.inner; ++r) {
             for (int64_t j = 0; j < S.n; ++j) {
               const auto p = static_cast<int64_t>(in[1][S.at(r, j)]);
               out[D.at(r, p)] += in[0][S.at(r, j)];
             }
           }
           return std::vector<RefTensor>{out};
         },
     // indices: positions in [0, 4) with repeats (dy's axis 1 has extent 3).
     .samples = {{{{2, 3}, {2, 3}}, {int64_t{1}, int64_t{4}}, {DType::kFloat64, DType::kInt64}},
                 {{{3, 2}, {3, 2}}, {int64_t{0}, int64_t{5}}, {DType::kFloat64, DType::kInt32}}},
     .make_input =
         [](int index, RefTensor& t, std::mt19937& rng) {
           if (index != 1) return;
           std::uniform_int_distribution<int> pick(0, 3);
           for (double& v : t.data) v = pick(rng);
         }});

JANUS_OP_SPEC({.op = "take_along_axis",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const int64_t axis = attrs.get<int64_t>(0);
                     const Rows X = rows_of(in[0].shape, axis);
                     const Rows P{X.axis, X.outer, in[1].shape[X.axis], X.inner};
                     RefTensor y = ref_zeros(in[1].shape);
                     for (int64_t r = 0; r < X.outer * X.inner; ++r) {
                       for (int64_t j = 0; j < P.n; ++j) {
                         auto p = static_cast<int64_t>(in[1][P.at(r, j)]);
                         if (p < 0) p += X.n;
                         y[P.at(r, j)] = in[0][X.at(r, p)];
                       }
                     }
                     return std::vector<RefTensor>{y};
                   },
               // indices: positions in [-2, 1] with repeats (every axis has extent >= 2).
               .samples = {{{{3, 4}, {3, 5}}, {int64_t{1}}, {DType::kFloat64, DType::kInt64}},
                           {{{2, 3, 2}, {4, 3, 2}}, {int64_t{0}}, {DType::kFloat64, DType::kInt32}},
                           {{{2, 3}, {2, 2}}, {int64_t{-1}}, {DType::kFloat64, DType::kFloat32}}},
               .make_input =
                   [](int index, RefTensor& t, std::mt19937& rng) {
                     if (index != 1) return;
                     std::uniform_int_distribution<int> pick(-2, 1);
                     for (double& v : t.data) v = pick(rng);
                   }});

}  // namespace
}  // namespace janus::testing
