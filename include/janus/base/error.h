// Typed errors and the checks that raise them. Layer: base (used by every other layer).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <source_location>
#include <stdexcept>
#include <string>

namespace janus {

/// Base of every error Janus raises. `what()` is the message; `location()` is where in Janus
/// the check failed. Context (operator name, pass, file) is prepended while unwinding with
/// `add_context`, so the outermost context reads first: "engine: operator 'dot': ...".
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, std::source_location loc = std::source_location::current())
      : std::runtime_error(message), message_(std::move(message)), loc_(loc) {}

  const char* what() const noexcept override { return message_.c_str(); }
  const std::source_location& location() const { return loc_; }

  /// Prepends "context: " to the message. Call it only on an exception that you own (caught by
  /// reference before it is rethrown or stored).
  void add_context(std::string_view context) {
    message_ = fmt::format("{}: {}", context, message_);
  }

  /// Appends " (what_next)" to the message: what the reader can do about it. Same ownership
  /// rule as add_context.
  void add_hint(std::string_view what_next) {
    message_ = fmt::format("{} ({})", message_, what_next);
  }

 private:
  std::string message_;
  std::source_location loc_;
};

#define JANUS_DECLARE_ERROR(Name)      \
  class Name : public ::janus::Error { \
   public:                             \
    using ::janus::Error::Error;       \
  }

JANUS_DECLARE_ERROR(ShapeError);           // shapes that do not fit together
JANUS_DECLARE_ERROR(TypeError);            // wrong or unsupported dtype
JANUS_DECLARE_ERROR(ValueError);           // a bad argument value
JANUS_DECLARE_ERROR(IndexError);           // an index or axis out of range
JANUS_DECLARE_ERROR(DeviceError);          // wrong, unknown or mismatched device
JANUS_DECLARE_ERROR(NotImplementedError);  // a valid request that Janus cannot do (yet)
JANUS_DECLARE_ERROR(IOError);              // a file that cannot be opened or read (names the path)
JANUS_DECLARE_ERROR(FormatError);          // a file whose contents are malformed (names the path)
JANUS_DECLARE_ERROR(TraceError);           // a hybridized block's forward did what tracing cannot
JANUS_DECLARE_ERROR(EngineError);          // misuse of the engine (e.g. pushing after shutdown)
JANUS_DECLARE_ERROR(OperatorError);        // a kernel threw something that is not a janus::Error
JANUS_DECLARE_ERROR(DistError);  // a collective or rendezvous across processes failed or timed out
JANUS_DECLARE_ERROR(InternalError);  // a bug in Janus: please report it

#undef JANUS_DECLARE_ERROR

namespace detail {
template <typename E, typename... Args>
[[noreturn]] void throw_error(std::source_location loc, fmt::format_string<Args...> f,
                              Args&&... args) {
  throw E(fmt::format(f, std::forward<Args>(args)...), loc);
}
}  // namespace detail

}  // namespace janus

/// Caller's mistake found where no single condition names it (an unknown name at the end of a
/// lookup, a parse that failed): throws `ErrType` with a formatted message, always. The call
/// is [[noreturn]], so nothing (no dummy `return`) follows it. Message shape: "component: what
/// was wrong, what was expected", lowercase, no trailing period.
///   JANUS_THROW(ValueError, "engine: JANUS_ENGINE='{}' is not known", name);
#define JANUS_THROW(ErrType, ...) \
  ::janus::detail::throw_error<ErrType>(std::source_location::current(), __VA_ARGS__)

/// Caller's mistake: JANUS_THROW(ErrType, ...) when `cond` is false. The message is formatted
/// only on failure.
#define JANUS_CHECK(cond, ErrType, ...)  \
  do {                                   \
    if (!(cond)) [[unlikely]] {          \
      JANUS_THROW(ErrType, __VA_ARGS__); \
    }                                    \
  } while (0)

/// Our bug: throws InternalError.
#define JANUS_ASSERT(cond, ...)                                                             \
  do {                                                                                      \
    if (!(cond)) [[unlikely]] {                                                             \
      ::janus::detail::throw_error<::janus::InternalError>(                                 \
          std::source_location::current(), "internal error (please report): " #cond ": {}", \
          fmt::format(__VA_ARGS__));                                                        \
    }                                                                                       \
  } while (0)

#ifdef NDEBUG
#define JANUS_DEBUG_ASSERT(cond, ...) \
  do {                                \
  } while (0)
#else
#define JANUS_DEBUG_ASSERT(cond, ...) JANUS_ASSERT(cond, __VA_ARGS__)
#endif
