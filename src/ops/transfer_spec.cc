// Conformance specifications of the transfer operators.
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// On the default single device, copyto(cpu(0)) is a same-device copy; copies between two
// logical devices are covered by src/ops/copyto_test.cc.
JANUS_OP_SPEC({.op = "copyto",
               .reference = [](const std::vector<RefTensor>& in,
                               const ops::Attrs&) { return std::vector<RefTensor>{in[0]}; },
               .samples = {{{{2, 3}}, {cpu(0)}}, {{{}}, {cpu(0)}}, {{{0}}, {cpu(0)}}}});

JANUS_OP_SPEC({.op = "copy_into",
               .note = "writes into an input, no outputs: checked by src/ops/into_ops_test.cc "
                       "(across devices, views, errors)"});
JANUS_OP_SPEC(
    {.op = "concat_into",
     .note = "writes into an input, no outputs: checked by src/parallel/allreduce_test.cc "
             "(parts across devices, views, errors)"});
JANUS_OP_SPEC({.op = "peer_add",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     RefTensor y = in[0];
                     for (int64_t i = 0; i < y.size(); ++i) y[i] += in[1][i];
                     return std::vector<RefTensor>{y};
                   },
               .samples = {{{{2, 3}, {2, 3}}, {}}, {{{7}, {7}}, {}}, {{{0}, {0}}, {}}}});
JANUS_OP_SPEC({.op = "add_into",
               .note = "writes into an input, no outputs: checked by src/ops/into_ops_test.cc "
                       "(every dtype, integer wrap-around, errors)"});
JANUS_OP_SPEC({.op = "fill_into",
               .note = "writes into an input, no outputs: checked by src/ops/into_ops_test.cc "
                       "(every dtype, views)"});

}  // namespace
}  // namespace janus::testing
