// relu_backward_bias(y, dy): relu's gradient dx = relu_backward(y, dy) of a [rows, columns]
// activation and dbias, dx summed over the rows (axis 0), in one pass over y and dy: the
// gradient of a fully_connected layer's relu and bias. Built by the graph pass
// fuse_relu_backward_bias from relu_backward followed by sum(axes=[0]); it gives their bits.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "janus/ops/ops.h"

#include "../elementwise/relu_rule.h"
#include "../elementwise/simd_loop.h"
#include "../op_utils.h"

namespace janus::ops {
namespace {

constexpr std::string_view kName = "relu_backward_bias";

std::vector<TensorSpec> infer(const InferArgs& args) {
  const TensorSpec& y = args.inputs[0];
  const TensorSpec& dy = args.inputs[1];
  JANUS_CHECK(y.shape == dy.shape, ShapeError,
              "{}: y has shape {} but dy has shape {}, expected one shape", kName, y.shape,
              dy.shape);
  JANUS_CHECK(y.dtype == dy.dtype, TypeError, "{}: y is {} but dy is {}, expected one dtype", kName,
              y.dtype, dy.dtype);
  JANUS_CHECK(dy.shape.ndim() == 2, ShapeError,
              "{}: dy has shape {}, expected 2 dimensions [rows, columns]", kName, dy.shape);
  JANUS_CHECK(dy.dtype == DType::kFloat32 || dy.dtype == DType::kFloat64, TypeError,
              "{}: dtype {} is not supported, expected float32 or float64", kName, dy.dtype);
  return {dy, TensorSpec{Shape{dy.shape[1]}, dy.dtype, dy.device}};
}

// One row's piece: dx = relu_backward's value, acc += dx in double (sum's accumulator, one
// addition per row in row order: sum(dx, {0})'s bits).
template <typename T>
JANUS_TARGET_CLONES void relu_fold_row(const T* __restrict y, const T* __restrict dy,
                                       T* __restrict dx, double* __restrict acc, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const T v = relu_masked(y[j], dy[j]);
    dx[j] = v;
    acc[j] += static_cast<double>(v);
  }
}

// Threads take strips of columns and walk every row (each column's sum in row order). One strip
// per thread, as wide as its share of the columns up to 2048 (16 KB of accumulators, in L1): a
// strip reads a piece of every row, and the prefetchers follow pieces of a few KB well, pieces
// of 2 KB out of every 8 KB row poorly.
template <typename T>
void relu_backward_bias(const T* y, const T* dy, T* dx, T* db, int64_t rows, int64_t cols,
                        const RunContext& ctx) {
  const int64_t threads = std::max(ctx.num_threads, 1);
  const int64_t share = (cols + threads - 1) / threads;
  const int64_t strip = std::clamp<int64_t>((share + 15) / 16 * 16, 16, 2048);
  const int64_t tasks = (cols + strip - 1) / strip;
  parallel_for(
      tasks, ctx,
      [&](int64_t lo, int64_t hi) {
        std::vector<double> acc(static_cast<size_t>(strip));
        for (int64_t t = lo; t < hi; ++t) {
          const int64_t j0 = t * strip, len = std::min(strip, cols - j0);
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t at = r * cols + j0;
            relu_fold_row(y + at, dy + at, dx + at, acc.data(), len);
          }
          for (int64_t j = 0; j < len; ++j)
            db[j0 + j] = static_cast<T>(acc[static_cast<size_t>(j)]);
        }
      },
      /*item_cost=*/rows * strip);
}

void kernel(const KernelArgs& args) {
  const NDArray& dy = args.in(1);
  const int64_t rows = dy.shape()[0], cols = dy.shape()[1];
  if (dy.dtype() == DType::kFloat64) {
    relu_backward_bias(args.in(0).data<double>(), dy.data<double>(), args.out(0).data<double>(),
                       args.out(1).data<double>(), rows, cols, args.ctx);
  } else {
    relu_backward_bias(args.in(0).data<float>(), dy.data<float>(), args.out(0).data<float>(),
                       args.out(1).data<float>(), rows, cols, args.ctx);
  }
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "relu_backward_bias",
    .doc = "dx = dy where y > 0 or y is NaN, else 0 (relu_backward), and dbias = dx summed over "
           "axis 0 (in float64, rounded once: sum's bits), for y and dy [rows, columns], in one "
           "pass. Built by the graph pass fuse_relu_backward_bias.",
    .inputs = {"y", "dy"},
    .outputs = {"dx", "dbias"},
    .infer = infer,
    .kernels = {{DeviceType::kCPU, kernel}},
    .not_differentiable = true,  // built by a pass after gradients
    .inplace_input = 1,          // dx over dy
});

}  // namespace janus::ops
