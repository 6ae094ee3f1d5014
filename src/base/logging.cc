// Leveled logging to stderr; the level comes from JANUS_LOG_LEVEL at first use.
#include "janus/base/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace janus {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("JANUS_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kWarning;
  const std::string v(env);
  if (v == "debug") return LogLevel::kDebug;
  if (v == "info") return LogLevel::kInfo;
  if (v == "error") return LogLevel::kError;
  return LogLevel::kWarning;
}

std::atomic<LogLevel>& level_ref() {
  static std::atomic<LogLevel> level{level_from_env()};
  return level;
}

constexpr const char* kLevelNames[] = {"debug", "info", "warning", "error"};

}  // namespace

LogLevel log_level() { return level_ref().load(std::memory_order_relaxed); }
void set_log_level(LogLevel level) { level_ref().store(level, std::memory_order_relaxed); }

void log_message(LogLevel level, std::string_view message) {
  std::fprintf(stderr, "[janus %s] %.*s\n", kLevelNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace janus
