// max_pool_relu_backward: the backward of LeNet's two convolutions' relu and max pooling
// (batch 128, layers [6, 28, 28] and [16, 10, 10], 2x2 windows) as the three calls of an
// unfused graph (max_pool2d_backward, relu_backward, conv2d_backward_bias) and as the one
// max_pool2d_relu_backward call that the pass fuse_max_pool_relu_backward puts in their place,
// side by side: the two variants alternate, sample by sample, so that load from other processes
// falls on both alike. A sample is the calls' kernel time under the profiler (from each kernel's
// start to its end, summed), without the engine's dispatch and queueing, which a compiled graph
// does not pay per step either; the figures are medians. The results must be bitwise equal.
// No floor: the loop's arrays stay in the caches (7 MB), whose bandwidth machine.h does not
// measure, and a copy-bandwidth floor would not bind. Ends with one JSON line: unfused_us and
// fused_us (per batch, both layers), saved_us, ratio (fused / unfused).
#include <cstdio>
#include <vector>

#include "janus/janus.h"
#include "janus/ops/registry.h"
#include "janus/profile/profiler.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using janus::NDArray;
using janus::Shape;

struct Layer {
  const char* name;
  Shape x, dy;
};

int run(const bench::Options& options) {
  namespace ops = janus::ops;
  const ops::OpDef& pool_grad = ops::get_op("max_pool2d_backward");
  const ops::OpDef& relu_grad = ops::get_op("relu_backward");
  const ops::OpDef& bias_grad = ops::get_op("conv2d_backward_bias");
  const ops::OpDef& fused = ops::get_op("max_pool2d_relu_backward");
  const ops::Attrs attrs = {std::vector<int64_t>{2}, std::vector<int64_t>{},
                            std::vector<int64_t>{0}, false};
  const std::vector<Layer> layers = {{"conv1", {128, 6, 28, 28}, {128, 6, 14, 14}},
                                     {"conv2", {128, 16, 10, 10}, {128, 16, 5, 5}}};
  const int samples = options.quick ? 20 : 300;
  std::printf(
      "max_pool_relu_backward: LeNet's relu + 2x2 max pooling backward, batch 128, %d "
      "alternating samples\n",
      samples);
  double unfused_total = 0, fused_total = 0;
  bool equal = true;
  // Microseconds of kernel time of the calls that `issue` makes, waiting for the last.
  auto kernel_us = [](const auto& issue) {
    janus::profiler::start();
    janus::wait_to_read(issue().back());
    janus::profiler::stop();
    double ns = 0;
    for (const auto& e : janus::profiler::events())
      ns += static_cast<double>(e.end_ns - e.start_ns);
    return ns / 1e3;
  };
  for (const Layer& l : layers) {
    // relu's output: half zeros (clamped), half positive.
    const NDArray x = janus::relu(janus::random_normal(0, 1, l.x));
    const NDArray dy = janus::random_normal(0, 1, l.dy);
    auto unfused = [&] {
      const NDArray p = ops::invoke(pool_grad, {x, dy}, attrs)[0];
      const NDArray dx = ops::invoke(relu_grad, {x, p}, {})[0];
      return std::vector<NDArray>{dx, ops::invoke(bias_grad, {dx}, {})[0]};
    };
    auto one = [&] { return ops::invoke(fused, {x, dy}, attrs); };
    const std::vector<NDArray> a = unfused(), b = one();
    for (size_t i = 0; i < 2; ++i)
      equal = equal && janus::to_vector<float>(a[i]) == janus::to_vector<float>(b[i]);
    std::vector<double> us_unfused, us_fused;
    for (int s = 0; s < samples; ++s) {
      us_unfused.push_back(kernel_us(unfused));
      us_fused.push_back(kernel_us(one));
    }
    const double u = bench::median(us_unfused), f = bench::median(us_fused);
    std::printf(
        "  %s x %s: unfused %.1f us (fastest %.1f), fused %.1f us (fastest %.1f), "
        "fused / unfused %.3f\n",
        l.name, l.x.to_string().c_str(), u, bench::min_of(us_unfused), f, bench::min_of(us_fused),
        f / u);
    unfused_total += u;
    fused_total += f;
  }
  std::printf(
      "  per batch (both layers): unfused %.1f us, fused %.1f us, saved %.1f us; results "
      "%s\n",
      unfused_total, fused_total, unfused_total - fused_total, equal ? "bitwise equal" : "DIFFER");
  bench::print_json_line("max_pool_relu_backward", {{"unfused_us", unfused_total},
                                                    {"fused_us", fused_total},
                                                    {"saved_us", unfused_total - fused_total},
                                                    {"ratio", fused_total / unfused_total},
                                                    {"bitwise_equal", equal ? 1.0 : 0.0}});
  return equal ? 0 : 1;
}

const bench::Registration reg{
    "max_pool_relu_backward",
    "LeNet's relu + max pooling backward: three calls against the fused one", run};

}  // namespace
