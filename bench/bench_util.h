// Small helpers shared by the bench programs: a steady_clock timer, summary statistics and
// the closing JSON line ({"bench": "<name>", "<key>": <number>, ...}).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

/// Starts on construction (or `reset`); reads elapsed time without stopping.
class Timer {
 public:
  Timer() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double ms() const { return seconds() * 1e3; }
  double us() const { return seconds() * 1e6; }

 private:
  Clock::time_point start_;
};

/// Median of `v` (the mean of the two middle values for an even count); 0 when empty.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

/// Arithmetic mean of `v`; 0 when empty.
inline double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

/// Smallest value of `v`; 0 when empty.
inline double min_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

/// Largest value of `v`; 0 when empty.
inline double max_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

struct Field {
  std::string_view key;
  double value;
};

/// Whether print_json_line prints (`janus bench` without --json turns it off).
inline bool json_output = true;

/// Prints one line of JSON, `{"bench": "<name>", "<key>": <value>, ...}`, and flushes. Values
/// are numbers (a non-finite value, which no bench should produce, prints as null).
inline void print_json_line(std::string_view bench_name, std::initializer_list<Field> fields) {
  if (!json_output) return;
  std::printf("{\"bench\": \"%.*s\"", static_cast<int>(bench_name.size()), bench_name.data());
  for (const Field& f : fields) {
    std::printf(", \"%.*s\": ", static_cast<int>(f.key.size()), f.key.data());
    if (std::isfinite(f.value)) {
      std::printf("%.6g", f.value);
    } else {
      std::printf("null");
    }
  }
  std::printf("}\n");
  std::fflush(stdout);
}

}  // namespace bench
