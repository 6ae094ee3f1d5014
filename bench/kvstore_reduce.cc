// kvstore_reduce: the cost of summing one array across the logical CPU devices through the
// `local` and `device` stores, as Trainer does it (pushpull in place: an allreduce) and as a
// push then a pull into separate outputs, for float32 arrays of 1 KB to 64 MB on 2 and 4
// devices. Each figure is the median of several calls, each ended by wait_all.
// The floor: the bus bandwidth (NCCL's busbw: bytes * 2(N-1)/N / time, what each device must
// send and receive in an allreduce, whatever the algorithm) cannot exceed the bandwidth of one
// device-to-device copy. Logical CPU devices share one memory system, so a copy is a memcpy
// through the caches and DRAM, and the copy bandwidth is measured in the same run (copyto of
// 64 MB from cpu(0) to cpu(1), median of several). `fraction` = busbw / copy bandwidth is the
// share of that floor reached (1 = at the floor). The ring's additions also read and write
// memory, and 4 devices on 2 cores share cores, so 1 is out of reach; the target is a fraction
// of at least 0.5 at 64 MB for the device store. `--quick` measures 1 KB and 1 MB only, once.
// Ends with one JSON line: copy_gbps and, for the largest size, time (s) and fraction per
// store, device count and form.
#include <cstdio>
#include <string>
#include <vector>

#include "janus/janus.h"
#include "janus/ops/transfer.h"
#include "janus/optim/kvstore.h"

#include "bench_util.h"
#include "suite.h"

namespace {

using janus::NDArray;

constexpr int64_t kMB = 1 << 20;

// Median seconds of `reps` calls of `fn`, each ended by wait_all, after one untimed call.
template <typename Fn>
double median_seconds(int reps, Fn fn) {
  fn();
  janus::wait_all();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    bench::Timer t;
    fn();
    janus::wait_all();
    times.push_back(t.seconds());
  }
  return bench::median(times);
}

int reps_for(int64_t bytes, bool quick) {
  if (quick) return 1;
  if (bytes >= 16 * kMB) return 5;
  if (bytes >= kMB) return 20;
  return 200;
}

// Bytes per second of copyto of 64 MB (16 MB with --quick) from cpu(0) to cpu(1).
double copy_bandwidth(bool quick) {
  const int64_t bytes = quick ? 16 * kMB : 64 * kMB;
  const NDArray src = janus::full({bytes / 4}, 1.0, janus::DType::kFloat32, janus::cpu(0));
  const NDArray dst = janus::zeros({bytes / 4}, janus::DType::kFloat32, janus::cpu(1));
  const double s = median_seconds(quick ? 1 : 7, [&] { janus::copy_into(dst, src); });
  return static_cast<double>(bytes) / s;
}

struct Figure {
  double seconds = 0, fraction = 0;
};

int run(const bench::Options& options) {
  const bool quick = options.quick;
  const std::vector<int64_t> sizes =
      quick ? std::vector<int64_t>{1024, kMB}
            : std::vector<int64_t>{1024, 64 * 1024, kMB, 16 * kMB, 64 * kMB};
  const int64_t largest = sizes.back();
  Figure at_largest[2][2][2];  // [store: local, device][devices: 2, 4][form: in place, separate]
  double copy_gbps = 0;
  const char* stores[] = {"local", "device"};
  std::printf("%-7s %-4s %10s %14s %10s %14s %10s\n", "store", "devs", "bytes", "pushpull ms",
              "fraction", "push+pull ms", "fraction");
  for (int d = 0; d < 2; ++d) {
    const int n = d == 0 ? 2 : 4;
    janus::wait_all();
    janus::set_num_cpu_devices(n);
    janus::set_engine(janus::EngineKind::kThreaded, janus::engine_options_from_env());
    const double copy_bw = copy_bandwidth(quick);
    if (d == 0) copy_gbps = copy_bw / 1e9;
    std::printf("%d devices: copy bandwidth cpu(0) -> cpu(1) %.2f GB/s\n", n, copy_bw / 1e9);
    for (int s = 0; s < 2; ++s) {
      for (const int64_t bytes : sizes) {
        const int64_t elements = bytes / 4;
        auto kv = janus::kvstore::create(stores[s]);
        kv->init(0, janus::zeros({elements}));
        std::vector<NDArray> values, outs;
        for (int i = 0; i < n; ++i) {
          values.push_back(janus::full({elements}, 1.0 + i, janus::DType::kFloat32, janus::cpu(i)));
          outs.push_back(janus::zeros({elements}, janus::DType::kFloat32, janus::cpu(i)));
        }
        const int reps = reps_for(bytes, quick);
        const double in_place = median_seconds(reps, [&] { kv->pushpull(0, values, values); });
        const double separate = median_seconds(reps, [&] {
          kv->push(0, values);
          kv->pull(0, outs);
        });
        const double bus = static_cast<double>(bytes) * 2.0 * (n - 1) / n;
        const Figure a{in_place, bus / in_place / copy_bw};
        const Figure b{separate, bus / separate / copy_bw};
        std::printf("%-7s %-4d %10lld %14.4f %10.3f %14.4f %10.3f\n", stores[s], n,
                    static_cast<long long>(bytes), a.seconds * 1e3, a.fraction, b.seconds * 1e3,
                    b.fraction);
        if (bytes == largest) {
          at_largest[s][d][0] = a;
          at_largest[s][d][1] = b;
        }
      }
    }
  }
  const Figure& dev2 = at_largest[1][0][0];
  std::printf(
      "device store, 2 devices, %lld bytes, pushpull in place: fraction %.3f (target >= "
      "0.5 at 64 MB: %s)\n",
      static_cast<long long>(largest), dev2.fraction,
      quick ? "not measured (quick)" : (dev2.fraction >= 0.5 ? "met" : "NOT met"));
  bench::print_json_line("kvstore_reduce",
                         {{"bytes", static_cast<double>(largest)},
                          {"copy_gbps", copy_gbps},
                          {"device_2dev_pushpull_s", at_largest[1][0][0].seconds},
                          {"device_2dev_pushpull_fraction", at_largest[1][0][0].fraction},
                          {"device_2dev_push_pull_s", at_largest[1][0][1].seconds},
                          {"device_2dev_push_pull_fraction", at_largest[1][0][1].fraction},
                          {"device_4dev_pushpull_s", at_largest[1][1][0].seconds},
                          {"device_4dev_pushpull_fraction", at_largest[1][1][0].fraction},
                          {"device_4dev_push_pull_fraction", at_largest[1][1][1].fraction},
                          {"local_2dev_pushpull_s", at_largest[0][0][0].seconds},
                          {"local_2dev_pushpull_fraction", at_largest[0][0][0].fraction},
                          {"local_2dev_push_pull_fraction", at_largest[0][0][1].fraction},
                          {"local_4dev_pushpull_fraction", at_largest[0][1][0].fraction},
                          {"local_4dev_push_pull_fraction", at_largest[0][1][1].fraction}});
  return 0;
}

const bench::Registration reg{
    "kvstore_reduce",
    "pushpull and push+pull through the local and device stores, 1 KB to 64 MB, 2 and 4 devices",
    run};

}  // namespace
