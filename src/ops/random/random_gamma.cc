// random_gamma(alpha): one Gamma(alpha, 1) sample per element of alpha (Marsaglia-Tsang).
#include <cmath>
#include <numbers>
#include <type_traits>

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
  const Philox gen(args.rng);
  const NDArray& alpha = args.in(0);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16>) {
      const T* a = alpha.data<T>();
      T* p = out.data<T>();
      const int64_t n = out.size();
      parallel_for(
          n, args.ctx,
          [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
              ElementStream s(gen, i, n);
              p[i] = static_cast<T>(sample_gamma(s, static_cast<double>(a[i])));
            }
          },
          /*item_cost=*/64);
    } else {
      JANUS_ASSERT(false, "random_gamma: kernel called with dtype {}", out.dtype());
    }
  });
}

std::vector<TensorSpec> infer_random_gamma(const InferArgs& args) {
  const TensorSpec& alpha = args.inputs[0];
  JANUS_CHECK(is_floating(alpha.dtype), TypeError,
              "random_gamma: alpha has dtype {}, expected a floating type", alpha.dtype);
  return {alpha};
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
