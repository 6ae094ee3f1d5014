// random_normal(loc, scale, shape, dtype, device): normal samples (Box-Muller on Philox words).
#include <cmath>
#include <numbers>

#include "janus/ops/ops.h"

#include "../creation/fill.h"
#include "normal_float.h"
#include "philox.h"
#include "random_attrs.h"

namespace janus::ops {
namespace {

// float64: element pair (2j, 2j+1) from words 0 and 1 of block j, one Box-Muller transform in
// double precision with libm's functions.
void normal_float64(const Philox& gen, double loc, double scale, double* p, int64_t n,
                    const RunContext& ctx) {
  const int64_t pairs = (n + 1) / 2;
  parallel_for(pairs, ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t j = lo; j < hi; ++j) {
      const auto w = gen.block(static_cast<uint64_t>(j));
      const double u1 = 1.0 - uniform01(w[0]);  // (0, 1]: log is finite
      const double u2 = uniform01(w[1]);
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double theta = 2.0 * std::numbers::pi * u2;
      p[2 * j] = loc + scale * r * std::cos(theta);
      if (2 * j + 1 < n) p[2 * j + 1] = loc + scale * r * std::sin(theta);
    }
  });
}

// The other floating types: four elements per block in single precision (normal_float.h),
// converted when T is not float; a chunk at a time through a buffer where needed (the types
// narrower than float, and the last partial block).
template <typename T>
void normal_single(const Philox& gen, float loc, float scale, T* p, int64_t n,
                   const RunContext& ctx) {
  constexpr int64_t kChunk = 256;  // blocks per buffered step
  const int64_t blocks = (n + 3) / 4;
  parallel_for(
      blocks, ctx,
      [&](int64_t lo, int64_t hi) {
        alignas(64) float buffer[4 * kChunk];
        for (int64_t b = lo; b < hi; b += kChunk) {
          const int64_t count = std::min(kChunk, hi - b);
          const int64_t elems = std::min(4 * count, n - 4 * b);
          if constexpr (std::is_same_v<T, float>) {
            if (elems == 4 * count) {  // whole blocks: straight into the output
              normal_blocks_float(gen, static_cast<uint64_t>(b), count, loc, scale, p + 4 * b);
              continue;
            }
          }
          normal_blocks_float(gen, static_cast<uint64_t>(b), count, loc, scale, buffer);
          for (int64_t i = 0; i < elems; ++i) p[4 * b + i] = static_cast<T>(buffer[i]);
        }
      },
      /*item_cost=*/4);
}

void random_normal_cpu(const KernelArgs& args) {
  const RandomNormalAttrs a = RandomNormalAttrs::from(args.attrs);
  const double loc = a.loc;
  const double scale = a.scale;
  const Philox gen(args.rng);
  const NDArray& out = args.out(0);
  switch (out.dtype()) {
    case DType::kFloat64:
      return normal_float64(gen, loc, scale, out.data<double>(), out.size(), args.ctx);
    case DType::kFloat32:
      return normal_single(gen, static_cast<float>(loc), static_cast<float>(scale),
                           out.data<float>(), out.size(), args.ctx);
    case DType::kFloat16:
      return normal_single(gen, static_cast<float>(loc), static_cast<float>(scale),
                           out.data<float16>(), out.size(), args.ctx);
    case DType::kBFloat16:
      return normal_single(gen, static_cast<float>(loc), static_cast<float>(scale),
                           out.data<bfloat16>(), out.size(), args.ctx);
    default:  // the shape rule admits floating types only
      JANUS_ASSERT(false, "random_normal: dtype {} reached the kernel", out.dtype());
  }
}

std::vector<TensorSpec> infer_random_normal(const InferArgs& args) {
  const double scale = RandomNormalAttrs::from(args.attrs).scale;
  JANUS_CHECK(scale >= 0.0, ValueError, "random_normal: scale is {}, expected scale >= 0", scale);
  auto specs = infer_created<RandomNormalAttrs>(args);
  JANUS_CHECK(is_floating(specs[0].dtype), TypeError,
              "random_normal: dtype {} is not a floating type, expected float32, float64, float16 "
              "or bfloat16",
              specs[0].dtype);
  return specs;
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "random_normal",
    .doc = "Normal samples with mean loc and standard deviation scale, seeded and deterministic.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({{"loc", AttrType::kFloat, 0.0, "mean"},
                             {"scale", AttrType::kFloat, 1.0, "standard deviation, >= 0"}}),
    .attr_fields = attr_fields<RandomNormalAttrs>(),
    .infer = infer_random_normal,
    .kernels = {{DeviceType::kCPU, random_normal_cpu}},
    .not_differentiable = true,  // no inputs
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray random_normal(double loc, double scale, const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("random_normal");
  return ops::invoke(op, {}, {loc, scale, shape, dtype, device})[0];
}
}  // namespace janus
