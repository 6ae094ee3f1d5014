// conv_vs_onednn: janus::conv2d (float32, forward) against oneDNN's convolution called directly
// on LeNet's shapes at batch 256: 1 -> 6 channels, 5x5, padding 2, on 28x28; and 6 -> 16
// channels, 5x5, on 14x14.
//
// oneDNN runs on the compute worker (bench::on_compute_worker, a sample at a time) with as many
// OpenMP threads as a Janus kernel gets, on plain NCHW / OIHW arrays as a caller holding NCHW
// arrays would call it (no reorders; oneDNN then takes its im2col + GEMM path); primitive,
// memory and stream are built once, outside the timed loop. Janus is timed end to end: the
// operator call, the push, the kernel on the worker (NCHW converted to and from channels-last
// around the primitive) and wait_to_read. Samples alternate; the figure is the median. For
// information, oneDNN on channels-last and on its preferred (blocked) layouts is timed too,
// conversions of the activations excluded: what a layout-propagating graph could reach. Ends
// with one JSON line: Janus/oneDNN-plain time ratios (below 1.0 = Janus faster), and each
// convolution's floor, which compute binds: its FLOPs (2 per multiply-add) at the compute peak
// (machine.h: no convolution kernel multiplies faster than oneDNN's sgemm on the same threads; the
// activations, 0.8 to 4.8 MB, stay in the caches between calls, so no DRAM figure bounds them).
// floor_ratio = Janus / floor >= 1.
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"
#include "janus/janus.h"

#include "bench_util.h"
#include "machine.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;

constexpr int kSamples = 15;
constexpr int kCallsPerSample = 5;

struct Case {
  const char* name;
  int64_t n, c, h, w, o, k, pad;
};

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

class OneDnnConv {
 public:
  using tag = dnnl::memory::format_tag;
  // `act`: the activations' layout (nchw, nhwc, or any: oneDNN's choice); weights are OIHW with
  // nchw, else oneDNN's choice.
  OneDnnConv(const Case& c, dnnl::engine& eng, tag act) : stream_(eng) {
    using dt = dnnl::memory::data_type;
    const int64_t oh = c.h + 2 * c.pad - c.k + 1, ow = c.w + 2 * c.pad - c.k + 1;
    const tag wei = act == tag::nchw ? tag::oihw : tag::any;
    const dnnl::memory::desc src({c.n, c.c, c.h, c.w}, dt::f32, act);
    const dnnl::memory::desc weights({c.o, c.c, c.k, c.k}, dt::f32, wei);
    const dnnl::memory::desc bias({c.o}, dt::f32, tag::x);
    const dnnl::memory::desc dst({c.n, c.o, oh, ow}, dt::f32, act);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src, weights, bias,
                                        dst, {1, 1}, {c.pad, c.pad}, {c.pad, c.pad}),
        user_scratchpad(), eng);
    prim_ = dnnl::convolution_forward(pd);
    impl_ = pd.impl_info_str();
    args_ = {{DNNL_ARG_SRC, dnnl::memory(pd.src_desc(), eng)},
             {DNNL_ARG_WEIGHTS, dnnl::memory(pd.weights_desc(), eng)},
             {DNNL_ARG_BIAS, dnnl::memory(pd.bias_desc(), eng)},
             {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), eng)}};

    for (auto& [arg, mem] : args_) {
      auto* p = static_cast<float*>(mem.get_data_handle());
      for (size_t i = 0; i < mem.get_desc().get_size() / sizeof(float); ++i)
        p[i] = 0.01f * static_cast<float>(i % 13);
    }
    // Its own scratchpad: the primitive runs on the worker, not where it was built.
    args_.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), eng));
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
  double janus_us, onednn_us, nhwc_us, blocked_us;
};

// One sample of `conv` on the compute worker.
double worker_sample_us(OneDnnConv& conv) {
  double us = 0;
  bench::on_compute_worker([&] { us = sample_us([&] { conv.run(); }); });
  return us;
}

Result run_case(const Case& c, dnnl::engine& eng) {
  janus::seed(1);
  const NDArray x = janus::random_uniform(-1, 1, {c.n, c.c, c.h, c.w});
  const NDArray w = janus::random_uniform(-1, 1, {c.o, c.c, c.k, c.k});
  const NDArray b = janus::zeros({c.o});
  auto janus_call = [&] { janus::wait_to_read(janus::conv2d(x, w, b, {1}, {c.pad})); };
  using tag = OneDnnConv::tag;
  OneDnnConv plain(c, eng, tag::nchw), nhwc(c, eng, tag::nhwc), blocked(c, eng, tag::any);
  for (int i = 0; i < 3; ++i) {
    janus_call();
    for (OneDnnConv* conv : {&plain, &nhwc, &blocked}) worker_sample_us(*conv);
  }
  std::vector<double> js, ps, hs, bs;
  for (int s = 0; s < kSamples; ++s) {
    js.push_back(sample_us(janus_call));
    ps.push_back(worker_sample_us(plain));
    hs.push_back(worker_sample_us(nhwc));
    bs.push_back(worker_sample_us(blocked));
  }
  const Result r{bench::median(js), bench::median(ps), bench::median(hs), bench::median(bs)};
  std::printf(
      "%-28s %10.0f %10.0f %8.2fx   %10.0f %10.0f   oneDNN: plain %s, nhwc %s, blocked %s\n",
      c.name, r.janus_us, r.onednn_us, r.janus_us / r.onednn_us, r.nhwc_us, r.blocked_us,
      plain.impl().c_str(), nhwc.impl().c_str(), blocked.impl().c_str());
  return r;
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  const int threads = bench::janus_kernel_threads();
  const janus::ScopedOmpThreads team(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  std::printf("conv2d forward, batch 256, float32; %d threads; median of %d samples of %d calls\n",
              threads, kSamples, kCallsPerSample);
  std::printf("%-28s %10s %10s %9s   %10s %10s\n", "shape", "janus us", "oneDNN us", "ratio",
              "nhwc us", "blocked us");
  const Case ca{"1->6, 5x5, pad 2, 28x28", 256, 1, 28, 28, 6, 5, 2};
  const Case cb{"6->16, 5x5, 14x14", 256, 6, 14, 14, 16, 5, 0};
  const Result a = run_case(ca, eng);
  const Result b = run_case(cb, eng);
  const double peak = bench::compute_peak_gflops(threads);
  auto floor_us = [peak](const Case& c) {
    const int64_t oh = c.h + 2 * c.pad - c.k + 1, ow = c.w + 2 * c.pad - c.k + 1;
    return 2.0 * static_cast<double>(c.n * c.o * oh * ow * c.c * c.k * c.k) / (peak * 1e3);
  };
  const double fa = floor_us(ca), fb = floor_us(cb);
  std::printf(
      "floors (compute binds, compute peak %.1f GFLOP/s): %.0f us, %.0f us; Janus / floor "
      "%.2f, %.2f\n",
      peak, fa, fb, a.janus_us / fa, b.janus_us / fb);
  bench::print_json_line("conv_vs_onednn", {{"ratio_conv1", a.janus_us / a.onednn_us},
                                            {"ratio_conv2", b.janus_us / b.onednn_us},
                                            {"janus_conv1_us", a.janus_us},
                                            {"janus_conv2_us", b.janus_us},
                                            {"nhwc_conv1_us", a.nhwc_us},
                                            {"nhwc_conv2_us", b.nhwc_us},
                                            {"blocked_conv1_us", a.blocked_us},
                                            {"blocked_conv2_us", b.blocked_us},
                                            {"floor_conv1_us", fa},
                                            {"floor_conv2_us", fb},
                                            {"floor_ratio_conv1", a.janus_us / fa},
                                            {"floor_ratio_conv2", b.janus_us / fb}});
  return 0;
}

const bench::Registration reg{
    "conv_vs_onednn",
    "LeNet convolutions (batch 256): Janus conv2d time over oneDNN called directly", run};

}  // namespace
