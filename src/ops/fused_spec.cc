// Conformance specification of fused_elementwise: a program mixing unary, scalar and binary
// steps, against the same arithmetic in float64; sizes below, at and above one tile.
#include <cmath>

#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC(
    {.op = "fused_elementwise",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs&) {
           // tanh(x0) * x1 + 0.5, then maximum with x0
           RefTensor t = ref_broadcast(ref_map(in[0], [](double v) { return std::tanh(v); }), in[1],
                                       [](double a, double b) { return a * b; });
           t = ref_map(t, [](double v) { return v + 0.5; });
           return std::vector<RefTensor>{
               ref_broadcast(t, in[0], [](double a, double b) { return std::max(a, b); })};
         },
     .samples = {{{{2, 3}, {2, 3}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{4096}, {4096}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{3, 4097}, {3, 4097}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{0}, {0}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}}},
     .note = "not differentiable: built by a pass after gradients"});

// relu_backward then the sum over axis 0: widths below and above one strip of the kernel (16
// and 512 columns), an empty batch.
JANUS_OP_SPEC({.op = "relu_backward_bias",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     RefTensor dx = ref_broadcast(
                         in[0], in[1], [](double y, double dy) { return y > 0 ? dy : 0.0; });
                     RefTensor db = ref_zeros(Shape{in[0].shape[1]});
                     for (int64_t r = 0; r < in[0].shape[0]; ++r)
                       for (int64_t c = 0; c < in[0].shape[1]; ++c)
                         db[c] += dx[r * in[0].shape[1] + c];
                     return std::vector<RefTensor>{dx, db};
                   },
               .samples = {{{{3, 5}, {3, 5}}},
                           {{{7, 40}, {7, 40}}},
                           {{{4, 1100}, {4, 1100}}},
                           {{{0, 6}, {0, 6}}}},
               .note = "not differentiable: built by a pass after gradients"});

}  // namespace
}  // namespace janus::testing
