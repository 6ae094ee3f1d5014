// Conformance specifications of the optimizer update operators. They have no outputs (they
// update the weight and their state in place) and the conformance runner compares outputs, so
// their values are checked by src/ops/optim_ops_test.cc instead.
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC({.op = "sgd_update",
               .note = "in-place update without outputs: checked by src/ops/optim_ops_test.cc "
                       "(hand-computed steps, wd, rescale, clipping, float64, errors)"});
JANUS_OP_SPEC({.op = "sgd_mom_update",
               .note = "in-place update without outputs: checked by src/ops/optim_ops_test.cc "
                       "(hand-computed steps of weight and momentum, float64, errors)"});
JANUS_OP_SPEC({.op = "adam_update",
               .note = "in-place update without outputs: checked by src/ops/optim_ops_test.cc "
                       "(hand-computed steps with and without bias correction, float64, errors)"});

}  // namespace
}  // namespace janus::testing
