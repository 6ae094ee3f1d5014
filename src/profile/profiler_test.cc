// The profiler's trace is valid Chrome-trace JSON with one process per device and one thread
// row per worker; its table adds up to its events; profiling changes no result.
#include "janus/profile/profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "janus/engine/array.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/symbol.h"
#include "janus/ops/ops.h"
#include "janus/profile/hardware.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

std::vector<float> work() {
  seed(5);
  const NDArray a = random_normal(0, 1, {64, 64});
  NDArray y = a;
  for (int i = 0; i < 5; ++i) y = add(dot(y, a), 1.0);
  return to_vector<float>(y);
}

TEST(Profiler, TraceHasDeviceProcessesWorkerThreadsAndOperators) {
  const std::vector<float> plain = work();
  profiler::start();
  EXPECT_TRUE(profiler::is_running());
  const std::vector<float> profiled = work();
  profiler::stop();
  EXPECT_EQ(plain, profiled);  // profiling changes no result

  const std::vector<profiler::Event> events = profiler::events();
  std::map<std::string, int> count;
  for (const auto& e : events) {
    ++count[e.name];
    EXPECT_LE(e.start_ns, e.end_ns);
  }
  EXPECT_EQ(count["dot"], 5);
  EXPECT_EQ(count["add_scalar"], 5);
  for (const auto& e : events) {
    if (e.name != "dot") continue;
    EXPECT_EQ(e.shapes, "[64, 64] [64, 64] -> [64, 64]");
    EXPECT_EQ(e.bytes, 3 * 64 * 64 * 4);  // two inputs and one output of float32
  }

  const auto trace = nlohmann::json::parse(profiler::trace_json());
  ASSERT_TRUE(trace.contains("traceEvents"));
  bool cpu_process = false, worker_row = false;
  int ops = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") cpu_process |= e["args"]["name"] == "cpu(0)";
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      worker_row |= e["args"]["name"].get<std::string>().find("compute lane") != std::string::npos;
    }
    if (e["ph"] == "X") {
      ++ops;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(e["args"].contains("shapes"));
      EXPECT_GE(e["args"]["bytes"].get<int64_t>(), 4);
    }
    if (e["ph"] == "C") ++counters;
  }
  EXPECT_TRUE(cpu_process);
  EXPECT_TRUE(worker_row);
  EXPECT_EQ(ops, static_cast<int>(events.size()));
  EXPECT_EQ(counters, static_cast<int>(events.size()));  // memory in use after each operation
}

TEST(Profiler, TableTotalsAddUpToTheEvents) {
  profiler::start();
  work();
  profiler::stop();
  double dot_ms = 0;
  int dots = 0;
  for (const auto& e : profiler::events()) {
    if (e.name != "dot") continue;
    dot_ms += static_cast<double>(e.end_ns - e.start_ns) / 1e6;
    ++dots;
  }
  const std::string table = profiler::dumps();
  EXPECT_THAT(table, HasSubstr("operator"));
  EXPECT_THAT(table, HasSubstr(fmt::format("{:<28} {:>8} {:>12.3f}", "dot", dots, dot_ms)));
  // Nothing is recorded once stopped.
  const size_t n = profiler::events().size();
  work();
  EXPECT_EQ(profiler::events().size(), n);
}

TEST(Profiler, StepsOfACompiledGraphAreEventsInsideTheirCachedOp) {
  const graph::Symbol x = graph::Symbol::var("x");
  const graph::Symbol y = graph::Symbol::op("relu", {graph::Symbol::op("dot", {x, x})});
  graph::CachedOp cached(y, {ops::TensorSpec{{32, 32}, DType::kFloat32, cpu()}});
  const NDArray a = full({32, 32}, 0.5);
  profiler::start();
  const NDArray out = cached({&a, 1})[0];
  wait_to_read(out);
  profiler::stop();
  std::map<std::string, profiler::Event> by_name;
  for (const auto& e : profiler::events()) by_name[e.name] = e;
  ASSERT_EQ(by_name.count("cached_op"), 1u);
  ASSERT_EQ(by_name.count("dot"), 1u);
  ASSERT_EQ(by_name.count("relu"), 1u);
  const profiler::Event& whole = by_name["cached_op"];
  EXPECT_EQ(whole.shapes, "[32, 32] -> [32, 32]");
  for (const char* step : {"dot", "relu"}) {
    EXPECT_GE(by_name[step].start_ns, whole.start_ns) << step;
    EXPECT_LE(by_name[step].end_ns, whole.end_ns) << step;
    EXPECT_EQ(by_name[step].thread, whole.thread) << step;
  }
  EXPECT_EQ(by_name["dot"].shapes, "[32, 32] [32, 32] -> [32, 32]");
}

TEST(Profiler, DumpNamesAPathItCannotWrite) {
  EXPECT_THAT(error_of<IOError>([] { profiler::dump("/no/such/dir/trace.json"); }),
              HasSubstr("/no/such/dir/trace.json"));
}

TEST(Benchmark, WaitsForTheEngineAndPrints) {
  testing::internal::CaptureStdout();
  double s = 0;
  {
    Benchmark b("matmuls");
    work();
    s = b.seconds();
  }
  EXPECT_GT(s, 0.0);
  EXPECT_THAT(testing::internal::GetCapturedStdout(), HasSubstr("matmuls: "));
}

// A kernel that fails inside the timed scope: the error is not swallowed.
void push_failing_kernel() {
  NDArray a = empty({2});
  engine().push([](const RunContext&) { throw ValueError("kaput"); }, {}, {a.var()}, cpu(),
                Lane::kCompute, 0, "broken_kernel");
}

TEST(Benchmark, StopReturnsTheSecondsAndPrintsOnce) {
  testing::internal::CaptureStdout();
  {
    Benchmark b("stopped");
    work();
    EXPECT_GT(b.stop(), 0.0);
    EXPECT_THAT(error_of<ValueError>([&] { b.stop(); }),
                HasSubstr("Benchmark 'stopped': stop() was already called"));
  }
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("stopped: "));
  EXPECT_EQ(out.find("stopped: "), out.rfind("stopped: "));  // the destructor printed nothing
}

TEST(Benchmark, StopRethrowsAKernelError) {
  Benchmark b("broken");
  push_failing_kernel();
  EXPECT_THAT(error_of<ValueError>([&] { b.stop(); }),
              HasSubstr("operator 'broken_kernel' failed: kaput"));
  EXPECT_NO_THROW(wait_all());  // reported once, by stop()
}

TEST(Benchmark, DestructorLogsAKernelErrorToStderr) {
  testing::internal::CaptureStderr();
  {
    Benchmark b("broken scope");
    push_failing_kernel();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("[janus error] Benchmark 'broken scope': the engine reported an "
                             "error (call stop() to get it as an exception): "));
  EXPECT_THAT(err, HasSubstr("operator 'broken_kernel' failed: kaput"));
}

// The peak is measured on the compute worker, as an operation: no OpenMP team is started on the
// caller's thread (see src/ops/onednn_threads_test.cc for why that matters).
TEST(Hardware, MeasuresOnTheComputeWorkerWithoutNewThreads) {
  const int threads = profile::kernel_threads();
  wait_to_read(dot(ones({256, 256}), ones({256, 256})));  // the worker's team exists
  auto count = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
      ++n;
    return n;
  };
  const int before = count();
  EXPECT_GT(profile::measure_sgemm_gflops(threads), 0.0);
  EXPECT_GT(profile::measure_copy_gbs(threads), 0.0);
  EXPECT_GT(profile::measure_compute_peak_gflops(threads), 0.0);
  EXPECT_EQ(count(), before);
}

TEST(Hardware, MeasuresAndReportsTheMachine) {
  const profile::HardwareReport r = profile::measure_hardware(1);
  EXPECT_GE(r.cores, 1);
  EXPECT_EQ(r.threads, 1);
  EXPECT_GT(r.sgemm_gflops, 0.0);
  EXPECT_GT(r.compute_peak_gflops, 0.0);
  EXPECT_GT(r.copy_gbs, 0.0);
  const std::string text = profile::to_string(r);
  EXPECT_THAT(text, HasSubstr("sgemm peak: "));
  EXPECT_THAT(text, HasSubstr("compute peak of the floors: "));
  EXPECT_THAT(text, HasSubstr("memory bandwidth: "));
  EXPECT_GE(profile::kernel_threads(), 1);
}

}  // namespace
}  // namespace janus
