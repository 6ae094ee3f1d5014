// random_gamma(alpha): one Gamma(alpha, 1) sample per element of alpha (Marsaglia-Tsang).
#include <cmath>
#include <numbers>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "element_stream.h"
#include "philox.h"

namespace janus::ops {
namespace {

// Marsaglia and Tsang, "A simple method for generating gamma variables" (2000): for a >= 1,
// with d = a - 1/3 and c = 1 / sqrt(9d), draw x normal and v = (1 + cx)^3 until v > 0 and
// log u < x^2/2 + d - dv + d log v; then d v ~ Gamma(a). Below 1, Gamma(a) = Gamma(a + 1)
// U^(1/a). Each try takes one block: two words for x (Box-Muller), two for u. The first block
// of the element is the U of the boost (taken whatever alpha, so the tries start at block 1).
double sample_gamma(ElementStream& s, double alpha) {
  if (!(alpha > 0.0)) return std::nan("");  // alpha <= 0 or NaN: no distribution
  const auto first = s.block();
  double boost = 1.0;
  double a = alpha;
  if (alpha < 1.0) {
    boost = std::pow(uniform_open(first[0], first[1]), 1.0 / alpha);
    a = alpha + 1.0;
  }
  const double d = a - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const auto w = s.block();
    const double r = std::sqrt(-2.0 * std::log(uniform_open(w[0], w[1] & 0xFFFF0000u)));
    const double x = r * std::cos(2.0 * std::numbers::pi * ((w[1] & 0xFFFFu) + 0.5) / 65536.0);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform_open(w[2], w[3]);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * boost;
  }
}

void random_gamma_cpu(const KernelArgs& args) {
  sample_per_element(args, "random_gamma", sample_gamma);
}

std::vector<TensorSpec> infer_random_gamma(const InferArgs& args) {
  return infer_per_element(args, "random_gamma", "alpha");
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "random_gamma",
    .doc = "One Gamma(alpha, 1) sample per element of alpha, from the seeded counter-based "
           "generator (NaN where alpha <= 0).\n\n"
           "Marsaglia-Tsang rejection (boosted by U^(1/alpha) below 1); element i of n takes "
           "blocks i, i + n, i + 2n, ... of the call's Philox stream, so its value depends only "
           "on the seed, the call's position and i.",
    .inputs = {"alpha"},
    .outputs = {"y"},
    .attrs = {},
    .infer = infer_random_gamma,
    .kernels = {{DeviceType::kCPU, random_gamma_cpu}},
    .not_differentiable = true,  // a sample; MXNet gives it no gradient either
    .random = true,
});

}  // namespace janus::ops
