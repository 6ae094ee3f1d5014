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

}  // namespace
}  // namespace janus::testing
