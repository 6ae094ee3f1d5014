// conv_vs_onednn: janus::conv2d (float32, forward) against oneDNN's convolution called directly
// on LeNet's shapes at batch 256: 1 -> 6 channels, 5x5, padding 2, on 28x28; and 6 -> 16
// channels, 5x5, on 14x14.
//
// oneDNN runs on this thread with as many OpenMP threads as a Janus kernel gets, with the same
// plain layouts Janus uses (NCHW / OIHW, so no reorders); primitive, memory and stream are
// built once, outside the timed loop. Janus is timed end to end: the operator call, the push,
// the kernel on the worker and wait_to_read. Samples alternate between the two; the figure is
// the median. For information, oneDNN with its preferred (blocked) layouts is timed too, the
// reorders of the activations excluded — what a layout-propagating graph could reach. Ends
// with one JSON line: Janus/oneDNN time ratios (1.0 = as fast).
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <vector>

#include <dnnl.hpp>

#include "bench_util.h"
#include "suite.h"
#include "machine.h"
#include "janus/janus.h"

namespace {

using bench::Timer;
using janus::NDArray;

constexpr int kSamples = 15;
constexpr int kCallsPerSample = 5;

struct Case {
  const char* name;
  int64_t n, c, h, w, o, k, pad;
};

class OneDnnConv {
 public:
  OneDnnConv(const Case& c, dnnl::engine& eng, bool blocked) : stream_(eng) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t oh = c.h + 2 * c.pad - c.k + 1, ow = c.w + 2 * c.pad - c.k + 1;
    const tag act = blocked ? tag::any : tag::nchw, wei = blocked ? tag::any : tag::oihw;
    const dnnl::memory::desc src({c.n, c.c, c.h, c.w}, dt::f32, act);
    const dnnl::memory::desc weights({c.o, c.c, c.k, c.k}, dt::f32, wei);
    const dnnl::memory::desc bias({c.o}, dt::f32, tag::x);
    const dnnl::memory::desc dst({c.n, c.o, oh, ow}, dt::f32, act);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src, weights, bias,
                                        dst, {1, 1}, {c.pad, c.pad}, {c.pad, c.pad}),
        eng);
    prim_ = dnnl::convolution_forward(pd);
    impl_ = pd.impl_info_str();
    args_ = {{DNNL_ARG_SRC, dnnl::memory(pd.src_desc(), eng)},
             {DNNL_ARG_WEIGHTS, dnnl::memory(pd.weights_desc(), eng)},
             {DNNL_ARG_BIAS, dnnl::memory(pd.bias_desc(), eng)},
             {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), eng)}};
    for (auto& [arg, mem] : args_) {
      auto* p = static_cast<float*>(mem.get_data_handle());
      for (size_t i = 0; i < mem.get_desc().get_size() / sizeof(float); ++i) p[i] = 0.01f * static_cast<float>(i % 13);
    }
  }
  void run() {
    prim_.execute(stream_, args_);
    stream_.wait();
  }
  const std::string& impl() const { return impl_; }

 private:
  dnnl::stream stream_;
  dnnl::convolution_forward prim_;
  std::unordered_map<int, dnnl::memory> args_;
  std::string impl_;
};

double sample_us(const std::function<void()>& call) {
  Timer t;
  for (int i = 0; i < kCallsPerSample; ++i) call();
  return t.us() / kCallsPerSample;
}

struct Result {
  double janus_us, onednn_us, blocked_us;
};

Result run_case(const Case& c, dnnl::engine& eng) {
  janus::seed(1);
  const NDArray x = janus::random_uniform(-1, 1, {c.n, c.c, c.h, c.w});
  const NDArray w = janus::random_uniform(-1, 1, {c.o, c.c, c.k, c.k});
  const NDArray b = janus::zeros({c.o});
  auto janus_call = [&] { janus::wait_to_read(janus::conv2d(x, w, b, {1}, {c.pad})); };
  OneDnnConv plain(c, eng, false), blocked(c, eng, true);
  for (int i = 0; i < 3; ++i) {
    janus_call();
    plain.run();
    blocked.run();
  }
  std::vector<double> js, ps, bs;
  for (int s = 0; s < kSamples; ++s) {
    js.push_back(sample_us(janus_call));
    ps.push_back(sample_us([&] { plain.run(); }));
    bs.push_back(sample_us([&] { blocked.run(); }));
  }
  const Result r{bench::median(js), bench::median(ps), bench::median(bs)};
  std::printf("%-28s %10.0f %10.0f %8.2fx   %10.0f (%s)   oneDNN plain: %s\n", c.name, r.janus_us,
              r.onednn_us, r.janus_us / r.onednn_us, r.blocked_us, blocked.impl().c_str(),
              plain.impl().c_str());
  return r;
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  const int threads = bench::janus_kernel_threads();
  omp_set_num_threads(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  std::printf("conv2d forward, batch 256, float32; %d threads; median of %d samples of %d calls\n",
              threads, kSamples, kCallsPerSample);
  std::printf("%-28s %10s %10s %9s   %10s\n", "shape", "janus us", "oneDNN us", "ratio",
              "blocked us");
  const Result a = run_case({"1->6, 5x5, pad 2, 28x28", 256, 1, 28, 28, 6, 5, 2}, eng);
  const Result b = run_case({"6->16, 5x5, 14x14", 256, 6, 14, 14, 16, 5, 0}, eng);
  bench::print_json_line("conv_vs_onednn", {{"ratio_conv1", a.janus_us / a.onednn_us},
                                            {"ratio_conv2", b.janus_us / b.onednn_us},
                                            {"janus_conv1_us", a.janus_us},
                                            {"janus_conv2_us", b.janus_us},
                                            {"blocked_conv1_us", a.blocked_us},
                                            {"blocked_conv2_us", b.blocked_us}});
  return 0;
}

const bench::Registration reg{
    "conv_vs_onednn",
    "LeNet convolutions (batch 256): Janus conv2d time over oneDNN called directly",
    run};

}  // namespace
