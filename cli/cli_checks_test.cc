// The option checks (cli_checks.h) and the program's error reporting (report_errors.h) alone.
#include "cli_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "janus/base/error.h"

#include "report_errors.h"

namespace janus::cli {
namespace {

TEST(CliChecks, IntegersNameTheValueAndTheRange) {
  EXPECT_EQ(integer_error("5", 1, 10), "");
  EXPECT_EQ(integer_error("0", 1, 10), "expected a positive integer, got 0");
  EXPECT_EQ(integer_error("-1", 0, 10), "expected a non-negative integer, got -1");
  EXPECT_EQ(integer_error("-99999999999999999999", 0, 10),
            "expected a non-negative integer, got -99999999999999999999");
  EXPECT_EQ(integer_error("11", 0, 10), "expected an integer of at most 10, got 11");
  EXPECT_EQ(integer_error("18446744073709551615", 0, UINT64_MAX), "");
  EXPECT_EQ(integer_error("18446744073709551616", 0, UINT64_MAX),
            "expected an integer of at most 18446744073709551615, got 18446744073709551616");
  EXPECT_EQ(integer_error("1.5", 0, 10), "'1.5' is not an integer");
  EXPECT_EQ(integer_error("", 0, 10), "'' is not an integer");
  EXPECT_EQ(integer_error("7x", 0, 10), "'7x' is not an integer");
}

TEST(CliChecks, NumbersNameTheValueAndTheRange) {
  const NumberRange positive{.min = 0, .min_inclusive = false};
  EXPECT_EQ(number_error("0.1", positive), "");
  EXPECT_EQ(number_error("1e-3", positive), "");
  EXPECT_EQ(number_error("0", positive), "expected a positive number, got 0");
  EXPECT_EQ(number_error("abc", positive), "'abc' is not a number");
  EXPECT_EQ(number_error("inf", positive), "'inf' is not a number");
  EXPECT_EQ(number_error("", positive), "'' is not a number");
  const NumberRange fraction{.min = 0, .max = 1};
  EXPECT_EQ(number_error("0", fraction), "");
  EXPECT_EQ(number_error("0.99", fraction), "");
  EXPECT_EQ(number_error("1", fraction), "expected a number in [0, 1), got 1");
  EXPECT_EQ(number_error("-0.5", NumberRange{}), "expected a non-negative number, got -0.5");
}

TEST(ReportErrors, EveryExceptionIsOneLineAndStatusOne) {
  std::ostringstream err;
  EXPECT_EQ(run_reporting_errors(
                "janus x", [] { return 0; }, err),
            0);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(run_reporting_errors(
                "janus x", []() -> int { throw ValueError("--a is 3"); }, err),
            1);
  EXPECT_EQ(err.str(), "janus x: --a is 3\n");
  err.str("");
  EXPECT_EQ(run_reporting_errors(
                "janus x", []() -> int { throw std::out_of_range("stoll"); }, err),
            1);
  EXPECT_EQ(err.str(), "janus x: unexpected error (please report): stoll\n");
  err.str("");
  EXPECT_EQ(run_reporting_errors(
                "janus x", []() -> int { throw 42; }, err),
            1);
  EXPECT_EQ(err.str(), "janus x: unexpected error of an unknown type (please report)\n");
}

}  // namespace
}  // namespace janus::cli
