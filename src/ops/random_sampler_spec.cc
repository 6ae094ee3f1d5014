// Conformance specifications of the rejection samplers (random_gamma, random_poisson).
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC({.op = "random_gamma",
               .note = "random: checked by src/ops/random_sampler_test.cc (determinism, moments, "
                       "NaN for alpha <= 0) and python/tests/test_random_distributions.py"});
JANUS_OP_SPEC({.op = "random_poisson",
               .note = "random: checked by src/ops/random_sampler_test.cc (determinism, moments "
                       "on both sides of lam = 10, NaN for lam < 0) and "
                       "python/tests/test_random_distributions.py"});

}  // namespace
}  // namespace janus::testing
