// Checks of the option values of our programs (janus, bench/fashion_accuracy), as CLI11
// validators: each names the value and what was expected ("expected a positive integer, got 0");
// CLI11 puts the option's name in front ("--epochs: ..."). Library janus_cli_common (cli/).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "janus/core/device.h"

namespace janus::cli {

/// "" when `text` is an integer in [min, max]; otherwise what is wrong with it.
std::string integer_error(const std::string& text, int64_t min, uint64_t max);

/// Which numbers a number check accepts.
struct NumberRange {
  double min = 0;
  bool min_inclusive = true;
  double max = std::numeric_limits<double>::infinity();
  bool max_inclusive = false;
};
/// "" when `text` is a finite number in `range`; otherwise what is wrong with it.
std::string number_error(const std::string& text, const NumberRange& range);

/// An integer of type T that is at least `min` (and fits T).
template <typename T>
CLI::Validator integer_at_least(T min) {
  const uint64_t max = static_cast<uint64_t>(std::numeric_limits<T>::max());
  return CLI::Validator(
      [min, max](std::string& text) { return integer_error(text, static_cast<int64_t>(min), max); },
      min == 1 ? "POSITIVE" : "NONNEGATIVE");
}

CLI::Validator positive_number();      // (0, inf)
CLI::Validator non_negative_number();  // [0, inf)
CLI::Validator fraction();             // [0, 1)
/// One of `names`, exactly.
CLI::Validator one_of(std::vector<std::string> names);
/// A device of this process ("cpu:0"), as janus::parse_device reads it, that exists.
CLI::Validator existing_device();
/// A comma-separated list of cpu devices, "cpu:0,cpu:1" (data parallelism): not empty, no
/// empty item, none twice, ids below kMaxDevicesPerType. The devices need not exist yet: the
/// program sets up as many as the list names (set_num_cpu_devices).
CLI::Validator device_list();
/// The devices of `text`; a ValueError saying what is wrong when device_list() refuses it.
std::vector<Device> parse_device_list(const std::string& text);
/// A path to a regular file that exists.
CLI::Validator existing_file();

/// The line a program prints (after "NAME: ") when its command line is refused: CLI11's message
/// with a lowercase first letter, as all our messages ("--epochs: expected a positive integer,
/// got 0").
std::string parse_error_text(const CLI::ParseError& e);

}  // namespace janus::cli
