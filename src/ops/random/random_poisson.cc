// random_poisson(lam): one Poisson(lam) sample per element of lam.
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "element_stream.h"
#include "philox.h"

namespace janus::ops {
namespace {

// Below this mean, Knuth's product of uniforms (about lam + 1 of them); from it on, Hormann's
// transformed rejection with squeeze (PTRS, "The transformed rejection method for generating
// Poisson random variables", 1993), whose acceptance rate exceeds 0.9 there.
constexpr double kRejectionFrom = 10.0;

double sample_poisson(ElementStream& s, double lam) {
  if (!(lam >= 0.0) || std::isinf(lam)) return std::nan("");  // lam < 0, NaN or infinite
  if (lam == 0.0) return 0.0;
  if (lam < kRejectionFrom) {
    const double limit = std::exp(-lam);
    double prod = 1.0;
    for (double k = 0.0;; k += 2.0) {  // two uniforms per block
      const auto w = s.block();
      prod *= uniform_open(w[0], w[1]);
      if (prod <= limit) return k;
      prod *= uniform_open(w[2], w[3]);
      if (prod <= limit) return k + 1.0;
    }
  }
  const double slam = std::sqrt(lam);
  const double loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const auto w = s.block();
    const double u = uniform_open(w[0], w[1]) - 0.5;
    const double v = uniform_open(w[2], w[3]);
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1.0)) {
      return k;
    }
  }
}

void random_poisson_cpu(const KernelArgs& args) {
  sample_per_element(args, "random_poisson", sample_poisson);
}

std::vector<TensorSpec> infer_random_poisson(const InferArgs& args) {
  return infer_per_element(args, "random_poisson", "lam");
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "random_poisson",
    .doc = "One Poisson(lam) sample per element of lam (a count, in lam's floating dtype), from "
           "the seeded counter-based generator (NaN where lam < 0 or is not finite).\n\n"
           "Knuth's product of uniforms below lam = 10, Hormann's PTRS rejection from there; "
           "element i of n takes blocks i, i + n, i + 2n, ... of the call's Philox stream.",
    .inputs = {"lam"},
    .outputs = {"y"},
    .attrs = {},
    .infer = infer_random_poisson,
    .kernels = {{DeviceType::kCPU, random_poisson_cpu}},
    .not_differentiable = true,  // a count
    .random = true,
});

}  // namespace janus::ops
