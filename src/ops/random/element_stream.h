// The random stream of one element of a rejection sampler (random_gamma, random_poisson): the
// number of draws per element varies, so element i of n takes blocks i, i + n, i + 2n, ... of
// the call's Philox stream. Each element's draws are then fixed by the seed, the call's position
// and i alone, whatever the thread that computes it. Private to src/ops.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "janus/ops/registry.h"

#include "../op_utils.h"
#include "philox.h"

namespace janus::ops {

class ElementStream {
 public:
  ElementStream(const Philox& gen, int64_t i, int64_t n)
      : gen_(gen), next_(static_cast<uint64_t>(i)), step_(static_cast<uint64_t>(n)) {}

  /// The next block of four words of this element.
  std::array<uint32_t, 4> block() {
    const auto w = gen_.block(next_);
    next_ += step_;
    return w;
  }

 private:
  const Philox& gen_;
  uint64_t next_;
  uint64_t step_;
};

/// A uniform number in the open interval (0, 1) from two words (53 significant bits): its log
/// is finite and it is never 1.
inline double uniform_open(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);  // 53 bits
  return (static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) + 0.5) * 0x1p-53;
}

/// The kernel of a sampler with one parameter per element: out[i] = sample(the stream of
/// element i, in[i]), in the parameter's floating dtype, computed in double.
template <typename Sample>
void sample_per_element(const KernelArgs& args, std::string_view op, Sample sample) {
  const Philox gen(args.rng);
  const NDArray& param = args.in(0);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16>) {
      const T* a = param.data<T>();
      T* p = out.data<T>();
      const int64_t n = out.size();
      parallel_for(
          n, args.ctx,
          [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
              ElementStream s(gen, i, n);
              p[i] = static_cast<T>(sample(s, static_cast<double>(a[i])));
            }
          },
          /*item_cost=*/64);
    } else {
      JANUS_ASSERT(false, "{}: kernel called with dtype {}", op, out.dtype());
    }
  });
}

/// Shape inference of such a sampler: the output is like its parameter `name`, which must be
/// floating.
inline std::vector<TensorSpec> infer_per_element(const InferArgs& args, std::string_view op,
                                                 std::string_view name) {
  const TensorSpec& param = args.inputs[0];
  JANUS_CHECK(is_floating(param.dtype), TypeError, "{}: {} has dtype {}, expected a floating type",
              op, name, param.dtype);
  return {param};
}

}  // namespace janus::ops
