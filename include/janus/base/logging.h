// Minimal leveled logging to stderr. Layer: base. JANUS_LOG_LEVEL=debug|info|warning|error.
#pragma once

#include <fmt/format.h>

namespace janus {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

/// The level below which messages are dropped (from JANUS_LOG_LEVEL, default warning).
LogLevel log_level();
void set_log_level(LogLevel level);
void log_message(LogLevel level, std::string_view message);

}  // namespace janus

#define JANUS_LOG(level, ...)                                                     \
  do {                                                                            \
    if (::janus::LogLevel::level >= ::janus::log_level()) {                       \
      ::janus::log_message(::janus::LogLevel::level, ::fmt::format(__VA_ARGS__)); \
    }                                                                             \
  } while (0)
