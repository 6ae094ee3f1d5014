// The profiler: an engine OpListener that appends events to per-thread buffers.
#include "janus/profile/profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"
#include "janus/base/logging.h"
#include "janus/core/allocator.h"

namespace janus::profiler {
namespace {

// Events of one worker thread; the thread appends under its own (uncontended) lock.
struct ThreadLog {
  int thread = 0;
  std::mutex mu;
  std::vector<Event> events;
};

class Recorder final : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail& detail, Device device, Lane lane,
                    int64_t start_ns, int64_t end_ns) override {
    ThreadLog& log = local();
    const int64_t memory = memory_stats(device).bytes_in_use;
    std::lock_guard lock(log.mu);
    log.events.push_back(Event{std::string(name), device, lane, log.thread, start_ns, end_ns,
                               detail.shapes, detail.bytes, memory});
  }

  void clear() {
    std::lock_guard lock(mu_);
    for (auto& log : logs_) {
      std::lock_guard l(log->mu);
      log->events.clear();
    }
  }

  std::vector<Event> all() {
    std::vector<Event> out;
    std::lock_guard lock(mu_);
    for (auto& log : logs_) {
      std::lock_guard l(log->mu);
      out.insert(out.end(), log->events.begin(), log->events.end());
    }
    std::sort(out.begin(), out.end(),
              [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
    return out;
  }

 private:
  ThreadLog& local() {
    thread_local ThreadLog* log = nullptr;
    if (log == nullptr) {
      std::lock_guard lock(mu_);
      logs_.push_back(std::make_unique<ThreadLog>());  // lives as long as the recorder
      logs_.back()->thread = static_cast<int>(logs_.size()) - 1;
      log = logs_.back().get();
    }
    return *log;
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<ThreadLog>> logs_;
};

Recorder& recorder() {
  static auto* r = new Recorder();  // never destroyed: workers may report during exit
  return *r;
}

bool g_running = false;

}  // namespace

void start() {
  engine().wait_all();
  recorder().clear();
  set_op_listener(&recorder());
  g_running = true;
}

void stop() {
  engine().wait_all();
  set_op_listener(nullptr);
  g_running = false;
}

bool is_running() { return g_running; }

std::vector<Event> events() { return recorder().all(); }

std::string trace_json() {
  using nlohmann::json;
  const std::vector<Event> evs = events();
  const int64_t t0 = evs.empty() ? 0 : evs.front().start_ns;
  json out = json::array();
  std::map<int, std::string> processes;                // pid -> device name
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) -> row name
  for (const Event& e : evs) {
    const int pid = static_cast<int>(e.device.type) * 1000 + e.device.id;
    const std::string lane(lane_name(e.lane));
    processes[pid] = to_string(e.device);
    threads[{pid, e.thread}] = fmt::format("worker {} ({} lane)", e.thread, lane);
    out.push_back({{"name", e.name},
                   {"cat", lane},
                   {"ph", "X"},
                   {"pid", pid},
                   {"tid", e.thread},
                   {"ts", static_cast<double>(e.start_ns - t0) / 1e3},
                   {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1e3},
                   {"args", {{"shapes", e.shapes}, {"bytes", e.bytes}}}});
    out.push_back({{"name", "memory in use (MB)"},
                   {"ph", "C"},
                   {"pid", pid},
                   {"ts", static_cast<double>(e.end_ns - t0) / 1e3},
                   {"args", {{"MB", static_cast<double>(e.memory_bytes) / 1e6}}}});
  }
  for (const auto& [pid, name] : processes) {
    out.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
  }
  for (const auto& [key, name] : threads) {
    out.push_back({{"name", "thread_name"},
                   {"ph", "M"},
                   {"pid", key.first},
                   {"tid", key.second},
                   {"args", {{"name", name}}}});
  }
  return json{{"traceEvents", out}, {"displayTimeUnit", "ms"}}.dump();
}

void dump(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  JANUS_CHECK(out.good(), IOError, "profiler::dump: cannot open '{}' for writing", path);
  out << trace_json();
  out.close();
  JANUS_CHECK(!out.fail(), IOError, "profiler::dump: writing '{}' failed", path);
}

std::string dumps() {
  struct Row {
    int64_t count = 0;
    double total = 0, min = 1e300, max = 0;
    double bytes = 0;
  };
  std::map<std::string, Row> rows;
  for (const Event& e : events()) {
    Row& r = rows[e.name];
    const double ms = static_cast<double>(e.end_ns - e.start_ns) / 1e6;
    ++r.count;
    r.total += ms;
    r.bytes += static_cast<double>(e.bytes);
    r.min = std::min(r.min, ms);
    r.max = std::max(r.max, ms);
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  std::string out = fmt::format("{:<28} {:>8} {:>12} {:>10} {:>10} {:>10} {:>8}\n", "operator",
                                "count", "total ms", "mean ms", "min ms", "max ms", "GB/s");
  for (const auto& [name, r] : sorted) {
    const double gbs = r.total > 0 ? r.bytes / (r.total * 1e6) : 0.0;
    out += fmt::format("{:<28} {:>8} {:>12.3f} {:>10.4f} {:>10.4f} {:>10.4f} {:>8.2f}\n", name,
                       r.count, r.total, r.total / static_cast<double>(r.count), r.min, r.max, gbs);
  }
  return out;
}

}  // namespace janus::profiler

namespace janus {

Benchmark::Benchmark(std::string description) : description_(std::move(description)) {
  engine().wait_all();
  start_ns_ = op_clock_ns();
}

double Benchmark::seconds() const {
  engine().wait_all();
  return static_cast<double>(op_clock_ns() - start_ns_) / 1e9;
}

double Benchmark::stop() {
  JANUS_CHECK(!stopped_, ValueError, "Benchmark '{}': stop() was already called", description_);
  stopped_ = true;  // also on error: the engine reports an error once, so it is not lost
  const double s = seconds();
  std::fputs(fmt::format("{}: {:.4f} sec\n", description_, s).c_str(), stdout);
  return s;
}

Benchmark::~Benchmark() {
  if (stopped_) return;
  try {
    stop();
  } catch (const std::exception& e) {
    // A destructor must not throw, and wait_all has taken the error from the engine: this log
    // line is the only report of it.
    JANUS_LOG(kError,
              "Benchmark '{}': the engine reported an error (call stop() to get it as "
              "an exception): {}",
              description_, e.what());
  } catch (...) {
    JANUS_LOG(kError,
              "Benchmark '{}': the engine reported an error that is not a "
              "std::exception",
              description_);
  }
}

}  // namespace janus
