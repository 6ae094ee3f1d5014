// The registry of benchmarks (see suite.h).
#include "suite.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>

#include "janus/janus.h"

namespace bench {
namespace {

std::map<std::string_view, Entry>& registry() {
  static auto* r = new std::map<std::string_view, Entry>();
  return *r;
}

void reset_engine() {
  static const int cpu_devices = janus::num_cpu_devices();  // JANUS_CPU_DEVICES, or 1
  janus::set_num_cpu_devices(cpu_devices);
  janus::set_engine(janus::EngineKind::kThreaded, janus::engine_options_from_env());
}

}  // namespace

Registration::Registration(std::string_view name, std::string_view summary, RunFn run) {
  if (!registry().emplace(name, Entry{name, summary, run}).second) {
    std::fprintf(stderr, "bench: '%.*s' is registered twice\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
}

std::vector<Entry> suite() {
  std::vector<Entry> out;
  for (const auto& [name, entry] : registry()) out.push_back(entry);
  return out;
}

const Entry* find(std::string_view name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

int run(const Entry& entry, const Options& options) {
  int status = 1;
  try {
    reset_engine();
    status = entry.run(options);
    janus::wait_all();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(entry.name.size()), entry.name.data(),
                 e.what());
    status = 1;
  }
  try {
    reset_engine();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(entry.name.size()), entry.name.data(),
                 e.what());
    status = 1;
  }
  std::fflush(stdout);
  return status;
}

}  // namespace bench
