// Errors: typed checks, lazy formatting, context added while unwinding.
#include "janus/base/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/unique_function.h"

namespace janus {
namespace {

using testing::HasSubstr;

int format_calls = 0;
struct Counted {};
}  // namespace
}  // namespace janus

template <>
struct fmt::formatter<janus::Counted> : fmt::formatter<std::string_view> {
  auto format(janus::Counted, format_context& ctx) const {
    ++janus::format_calls;
    return fmt::formatter<std::string_view>::format("counted", ctx);
  }
};

namespace janus {
namespace {

TEST(Error, CheckThrowsTheNamedTypeWithTheFormattedMessage) {
  try {
    JANUS_CHECK(1 + 1 == 3, ShapeError, "conv2d: weight has {} dims, expected {}", 3, 4);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "conv2d: weight has 3 dims, expected 4");
    EXPECT_THAT(e.location().file_name(), HasSubstr("error_test.cc"));
  }
}

TEST(Error, MessageIsFormattedOnlyOnFailure) {
  format_calls = 0;
  JANUS_CHECK(true, ValueError, "never {}", Counted{});
  EXPECT_EQ(format_calls, 0);
  EXPECT_THROW(JANUS_CHECK(false, ValueError, "now {}", Counted{}), ValueError);
  EXPECT_EQ(format_calls, 1);
}

// JANUS_THROW is [[noreturn]]: a function that ends with it needs no return after it.
int parse_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  JANUS_THROW(ValueError, "parse_digit: '{}' is not a digit, expected 0-9", c);
}

TEST(Error, ThrowAlwaysThrowsTheNamedTypeWithItsLocation) {
  EXPECT_EQ(parse_digit('7'), 7);
  try {
    parse_digit('x');
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "parse_digit: 'x' is not a digit, expected 0-9");
    EXPECT_THAT(e.location().file_name(), HasSubstr("error_test.cc"));
    EXPECT_THAT(e.location().function_name(), HasSubstr("parse_digit"));
  }
}

TEST(Error, AssertIsAnInternalErrorAskingForAReport) {
  try {
    JANUS_ASSERT(2 < 1, "queue has {} items", 5);
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("please report"));
    EXPECT_THAT(e.what(), HasSubstr("queue has 5 items"));
  }
}

TEST(Error, ContextIsPrependedAndTheTypeKept) {
  try {
    try {
      throw TypeError("add: dtypes differ");
    } catch (Error& e) {
      e.add_context("operator 'add' failed");
      throw;
    }
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "operator 'add' failed: add: dtypes differ");
  }
}

TEST(Error, HintIsAppendedAndTheTypeKept) {
  try {
    try {
      throw ShapeError("dot: shapes differ");
    } catch (Error& e) {
      e.add_context("operator 'dot' failed");
      e.add_hint("set JANUS_ENGINE=naive");
      throw;
    }
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "operator 'dot' failed: dot: shapes differ (set JANUS_ENGINE=naive)");
  }
}

TEST(Error, AllTypesDeriveFromError) {
  EXPECT_THROW(throw IndexError("x"), Error);
  EXPECT_THROW(throw DeviceError("x"), Error);
  EXPECT_THROW(throw NotImplementedError("x"), Error);
  EXPECT_THROW(throw EngineError("x"), std::runtime_error);
}

TEST(UniqueFunction, CallsSmallAndLargeCapturesAndMoves) {
  int hits = 0;
  UniqueFunction<int(int)> small = [&hits](int x) { return ++hits + x; };
  std::array<char, 512> big{};
  big[7] = 3;
  UniqueFunction<int(int)> large = [big](int x) { return big[7] + x; };
  EXPECT_EQ(small(10), 11);
  EXPECT_EQ(large(1), 4);
  UniqueFunction<int(int)> moved = std::move(large);
  EXPECT_FALSE(static_cast<bool>(large));  // NOLINT(bugprone-use-after-move): checks the move
  EXPECT_EQ(moved(2), 5);
  auto owned = std::make_unique<int>(9);  // move-only captures are fine
  UniqueFunction<int()> f = [p = std::move(owned)] { return *p; };
  EXPECT_EQ(f(), 9);
  f = nullptr;
  EXPECT_FALSE(static_cast<bool>(f));
}

TEST(UniqueFunction, DestroysItsCaptureOnce) {
  auto counter = std::make_shared<int>(0);
  {
    UniqueFunction<void()> f = [counter] {};
    EXPECT_EQ(counter.use_count(), 2);
    UniqueFunction<void()> g = std::move(f);
    EXPECT_EQ(counter.use_count(), 2);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

}  // namespace
}  // namespace janus
