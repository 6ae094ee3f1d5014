// hybridize_mlp: the seed's experiment (d2l.ai 12.1, "Hybrid Programming"). An MLP 512 -> 256
// -> 128 -> 2 (ReLU) is called 1000 times on one 1x512 input, imperatively and hybridized,
// each timed from the first call until the engine is idle, printed as the seed prints it.
//
// The floor is measured, not computed from nominal rates. The weights (660 KB) stay in L2 across
// calls, and every matrix-vector product must read them once, so the floor is the time one core
// takes to read them from its cache (a loop that sums them, 64-byte aligned as Janus holds them):
// no implementation on one core does with less. Beside it, the products themselves: the same
// arithmetic on the same weights written here as plain vectorized loops (three matrix-vector
// products with bias and relu, batch 1, one core, no framework) that differ in how many rows and
// partial sums a pass keeps; the fastest one's best round, and the hybridized call's ratio to it,
// tell how much of the gap to the floor is the loop's instructions and how much the framework.
// Each is called 100 times in a row, 200 such rounds interleaved with the Janus rounds; each
// figure is its best round. Ends with one JSON line.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "janus/janus.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;
namespace nn = janus::nn;

constexpr int kCalls = 1000;
// Floor rounds are short, so that some of them run between the interruptions of a busy
// machine: their best is the bound.
constexpr int kFloorCalls = 100;
constexpr int kFloorRounds = 200;

std::shared_ptr<nn::Sequential> make_net() {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Dense>(256, "relu"), std::make_shared<nn::Dense>(128, "relu"),
           std::make_shared<nn::Dense>(2));
  net->initialize(nn::Xavier());
  return net;
}

// Seconds for kCalls calls, waiting for the engine at the end (the seed's npx.waitall()), and
// the seconds until the last call returned: the frontend's share. No call waits for the one
// before, so the frontend runs ahead of the worker when its share is the smaller one, and the
// total is then the worker's time (the kernels and the engine's work around each operation).
struct CallTimes {
  double total_s = 0, frontend_s = 0;
};

CallTimes time_calls(nn::Block& net, const NDArray& x) {
  janus::wait_all();
  Timer t;
  for (int i = 0; i < kCalls; ++i) net(x);
  CallTimes times;
  times.frontend_s = t.seconds();
  janus::wait_all();
  times.total_s = t.seconds();
  return times;
}

// ---- The floor: the MLP's arithmetic without a framework. ----

#if defined(__x86_64__) && defined(__GNUC__)
#define FLOOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FLOOR_CLONES
#endif

// GCC notes that passing 64-byte vectors by value changes the ABI between instruction sets; the
// functions that do so are internal to this file and inlined, so no interface is affected.
#pragma GCC diagnostic ignored "-Wpsabi"

constexpr int kWidth = 16;
typedef float Vec __attribute__((vector_size(kWidth * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

typedef float Vec8 __attribute__((vector_size(8 * sizeof(float))));
typedef float Vec4 __attribute__((vector_size(4 * sizeof(float))));

inline float lanes_sum(Vec v) {
  const Vec8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const Vec4 q =
      __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
  return (q[0] + q[1]) + (q[2] + q[3]);
}

// Weights in 64-byte-aligned storage, as Janus's allocator gives them: a 16-float load then never
// straddles two cache lines.
struct AlignedFloats {
  explicit AlignedFloats(const std::vector<float>& v)
      : n(v.size()),
        p(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64)),
          &std::free) {
    std::memcpy(p.get(), v.data(), n * sizeof(float));
  }
  const float* data() const { return p.get(); }
  size_t size() const { return n; }

  size_t n;
  std::unique_ptr<float, decltype(&std::free)> p;
};

struct Layer {
  int64_t in = 0, out = 0;
  AlignedFloats w, b;  // w: [out, in] row-major, as Dense holds it
  bool relu = false;
};

// y = relu?(W·x + b), R rows a pass with A partial sums each: R·A independent chains of
// additions, each pass sharing the loads of x (k a multiple of 16·A; the rows left over one by
// one). Which (R, A) runs fastest depends on the core's registers, latencies and prefetchers, so
// the floor times several and keeps the best.
template <int R, int A>
FLOOR_CLONES void floor_layer(const Layer& l, const float* __restrict x, float* __restrict y) {
  const int64_t k = l.in;
  const float* b = l.b.data();
  int64_t j = 0;
  for (; j + R <= l.out; j += R) {
    Vec acc[R][A] = {};
    const float* w = l.w.data() + j * k;
    for (int64_t p = 0; p < k; p += A * kWidth) {
      for (int a = 0; a < A; ++a) {
        const Vec xv = load(x + p + a * kWidth);
        for (int r = 0; r < R; ++r) acc[r][a] += load(w + r * k + p + a * kWidth) * xv;
      }
    }
    for (int r = 0; r < R; ++r) {
      Vec sum = acc[r][0];
      for (int a = 1; a < A; ++a) sum += acc[r][a];
      y[j + r] = lanes_sum(sum) + b[j + r];
    }
  }
  for (; j < l.out; ++j) {
    Vec acc = {};
    for (int64_t p = 0; p < k; p += kWidth) acc += load(l.w.data() + j * k + p) * load(x + p);
    y[j] = lanes_sum(acc) + b[j];
  }
  if (l.relu) {
    for (int64_t i = 0; i < l.out; ++i) y[i] = y[i] < 0 ? 0 : y[i];
  }
}

// Reads every weight once (sums them): no matrix-vector product can do with less traffic.
FLOOR_CLONES float read_weights(const std::vector<Layer>& layers) {
  Vec acc[4] = {};
  for (const Layer& l : layers) {
    const float* w = l.w.data();
    const int64_t n = static_cast<int64_t>(l.w.size()) / (4 * kWidth) * (4 * kWidth);
    for (int64_t p = 0; p < n; p += 4 * kWidth) {
      for (int r = 0; r < 4; ++r) acc[r] += load(w + p + r * kWidth);
    }
  }
  return lanes_sum(acc[0] + acc[1] + acc[2] + acc[3]);
}

std::vector<Layer> layers_of(nn::Sequential& net) {
  std::vector<Layer> layers;
  for (const auto& [name, child] : net.children()) {
    const auto& dense = dynamic_cast<const nn::Dense&>(*child);
    const std::vector<float> w = janus::to_vector<float>(dense.weight()->data());
    const std::vector<float> b = janus::to_vector<float>(dense.bias()->data());
    const auto out = static_cast<int64_t>(b.size());
    layers.push_back(Layer{.in = static_cast<int64_t>(w.size()) / out,
                           .out = out,
                           .w = AlignedFloats(w),
                           .b = AlignedFloats(b),
                           .relu = layers.size() < 2});
  }
  return layers;
}

// The three products with one (rows, partial sums) choice of floor_layer.
struct FloorVariant {
  const char* name;
  void (*layer)(const Layer&, const float* __restrict, float* __restrict);
};
constexpr FloorVariant kVariants[] = {
    {"1 row x 2 sums", floor_layer<1, 2>},  {"1 row x 4 sums", floor_layer<1, 4>},
    {"4 rows", floor_layer<4, 1>},          {"8 rows", floor_layer<8, 1>},
    {"4 rows x 2 sums", floor_layer<4, 2>}, {"8 rows x 2 sums", floor_layer<8, 2>}};
constexpr size_t kVariantCount = std::size(kVariants);

// The floor's loops on the network's weights, timed a round (kFloorCalls calls) at a time.
class FloorLoops {
 public:
  FloorLoops(nn::Sequential& net, const NDArray& x)
      : layers_(layers_of(net)), in_(janus::to_vector<float>(x)), h1_(256), h2_(128), out_(2) {
    for (const Layer& l : layers_) weight_bytes_ += 4.0 * static_cast<double>(l.w.size());
    // Each loop must compute what the network computes, or it would time something else.
    const std::vector<float> want = janus::to_vector<float>(net.forward(x));
    for (const FloorVariant& v : kVariants) {
      run_mlp(v);
      for (size_t i = 0; i < want.size(); ++i) {
        JANUS_CHECK(std::abs(want[i] - out_[i]) <= 1e-4f * (1 + std::abs(want[i])),
                    janus::ValueError,
                    "hybridize_mlp: the floor loop ({}) gives {} for output {}, the network {}",
                    v.name, out_[i], i, want[i]);
      }
    }
  }

  // Mean microseconds per call over one round of each loop: the three products, and the bare
  // read.
  void time_round() {
    for (size_t v = 0; v < kVariantCount; ++v) {
      Timer t;
      for (int i = 0; i < kFloorCalls; ++i) run_mlp(kVariants[v]);
      mlp_us_[v].push_back(t.us() / kFloorCalls);
    }
    Timer t;
    for (int i = 0; i < kFloorCalls; ++i) sink_ = sink_ + read_weights(layers_);
    read_us_.push_back(t.us() / kFloorCalls);
  }

  // The best round of the fastest loop: a lower bound, as far from the machine's load as the
  // runs got.
  double mlp_us() const { return bench::min_of(mlp_us_[best()]); }
  const char* mlp_loop() const { return kVariants[best()].name; }
  // Each loop's best round, as "name us, ...".
  std::string loops() const {
    std::string text;
    for (size_t v = 0; v < kVariantCount; ++v) {
      text +=
          fmt::format("{}{} {:.2f}", v ? ", " : "", kVariants[v].name, bench::min_of(mlp_us_[v]));
    }
    return text;
  }
  double read_us() const { return bench::min_of(read_us_); }
  double weight_bytes() const { return weight_bytes_; }

 private:
  void run_mlp(const FloorVariant& v) {
    v.layer(layers_[0], in_.data(), h1_.data());
    v.layer(layers_[1], h1_.data(), h2_.data());
    v.layer(layers_[2], h2_.data(), out_.data());
  }

  size_t best() const {
    size_t best = 0;
    for (size_t v = 1; v < kVariantCount; ++v) {
      if (bench::min_of(mlp_us_[v]) < bench::min_of(mlp_us_[best])) best = v;
    }
    return best;
  }

  std::vector<Layer> layers_;
  std::vector<float> in_, h1_, h2_, out_;
  double weight_bytes_ = 0;
  volatile float sink_ = 0;
  std::vector<double> mlp_us_[kVariantCount], read_us_;
};

int run(const bench::Options& options) {
  janus::seed(0);
  const NDArray x = janus::random_normal(0, 1, {1, 512});
  auto net = make_net();
  net->forward(x);  // deferred initialisation
  FloorLoops floor(*net, x);

  // Each round runs every mode and the floor, so that the machine's load falls alike on all.
  std::vector<double> imperative, hybridized, static_alloc;
  std::vector<double> hybridized_frontend, static_frontend;
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    net->hybridize(false);
    imperative.push_back(time_calls(*net, x).total_s);
    net->hybridize(true);
    CallTimes times = time_calls(*net, x);
    hybridized.push_back(times.total_s);
    hybridized_frontend.push_back(times.frontend_s);
    net->hybridize(true, {.static_alloc = true, .static_shape = true});
    times = time_calls(*net, x);
    static_alloc.push_back(times.total_s);
    static_frontend.push_back(times.frontend_s);
    for (int i = 0; i < kFloorRounds / kRounds; ++i) floor.time_round();
  }
  const double imp_s = bench::median(imperative), hyb_s = bench::median(hybridized),
               static_s = bench::median(static_alloc);
  std::printf("Without hybridization: %.4f sec\n", imp_s);
  std::printf("With hybridization: %.4f sec\n", hyb_s);
  std::printf("With hybridization (static_alloc, static_shape): %.4f sec\n", static_s);
  std::printf("(medians of %d rounds of %d calls; traces: %lld)\n", kRounds, kCalls,
              static_cast<long long>(net->trace_count()));

  const double imp_us = imp_s / kCalls * 1e6, hyb_us = std::min(hyb_s, static_s) / kCalls * 1e6;
  // The frontend's share in the mode that hyb_us reports.
  const double frontend_us =
      bench::median(hyb_s <= static_s ? hybridized_frontend : static_frontend) / kCalls * 1e6;
  const double loop_us = floor.mlp_us(), read_us = floor.read_us();
  // The bare read bounds every loop; a loop measured below it (a slow spell in the read's best
  // round) becomes the floor instead, so that the floor stays the lower of the two.
  const double floor_us = std::min(loop_us, read_us);
  const double loop_gbs = floor.weight_bytes() / (loop_us * 1e3),
               read_gbs = floor.weight_bytes() / (read_us * 1e3);
  // Within a quarter of the bare read, the products are the weights' stream from cache.
  const char* loop_binds = read_us >= 0.75 * loop_us
                               ? "one core's L2 read bandwidth"
                               : "its instructions (it runs well behind the bare read)";
  std::printf(
      "\nper call: imperative %.1f us, hybridized %.1f us -> speedup %.2fx (target >= 3, the "
      "seed's MXNet got 2.7x)\nfloor: %.2f us, one core reading the %.0f weight bytes from its "
      "cache (%.1f GB/s; best of %d rounds of %d calls)\nthe same three products as a plain "
      "vectorized loop on one core: %.2f us (%s a pass, the fastest of %zu loops: %s us; %.1f "
      "GB/s); what binds the loop: %s\n-> hybridized is %.2fx the floor (target <= 1.25) and "
      "%.2fx the loop\nthe frontend returns from a hybridized call after %.2f us: %s\n",
      imp_us, hyb_us, imp_us / hyb_us, floor_us, floor.weight_bytes(), read_gbs, kFloorRounds,
      kFloorCalls, loop_us, floor.mlp_loop(), kVariantCount, floor.loops().c_str(), loop_gbs,
      loop_binds, hyb_us / floor_us, hyb_us / loop_us, frontend_us,
      frontend_us < 0.9 * hyb_us ? "the worker binds (kernels and the engine's work per operation)"
                                 : "the frontend binds (lookup, binding and push)");
  bench::print_json_line("hybridize_mlp", {{"imperative_us", imp_us},
                                           {"hybridized_us", hyb_us},
                                           {"hybridized_default_us", hyb_s / kCalls * 1e6},
                                           {"hybridized_frontend_us", frontend_us},
                                           {"speedup", imp_us / hyb_us},
                                           {"floor_us", floor_us},
                                           {"loop_us", loop_us},
                                           {"read_weights_us", read_us},
                                           {"floor_ratio", hyb_us / floor_us},
                                           {"loop_ratio", hyb_us / loop_us}});
  return 0;
}

const bench::Registration reg{
    "hybridize_mlp",
    "seed MLP 512-256-128-2, batch 1, 1000 calls: imperative vs hybridized vs floor", run};

}  // namespace
