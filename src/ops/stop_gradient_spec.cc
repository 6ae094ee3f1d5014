// Conformance specification of stop_gradient (its value; that it passes no gradient is checked
// by src/ops/stop_gradient_test.cc).
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC({.op = "stop_gradient",
               .reference = [](const std::vector<RefTensor>& in,
                               const ops::Attrs&) { return std::vector<RefTensor>{in[0]}; },
               .samples = {{{{2, 3}}}, {{{}}}, {{{0}}}, {{{5, 1, 2}}}},
               .check_grad = false,
               .note = "no gradient by design: see src/ops/stop_gradient_test.cc"});

}  // namespace
}  // namespace janus::testing
