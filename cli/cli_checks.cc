// The option checks of our programs.
#include "cli_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "janus/base/error.h"
#include "janus/core/device.h"

namespace janus::cli {
namespace {

std::string expected_integer(int64_t min) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return fmt::format("an integer >= {}", min);
}

std::string expected_number(const NumberRange& r) {
  if (r.min == 0 && !r.min_inclusive && std::isinf(r.max)) return "a positive number";
  if (r.min == 0 && r.min_inclusive && std::isinf(r.max)) return "a non-negative number";
  return fmt::format("a number in {}{}, {}{}", r.min_inclusive ? '[' : '(', r.min, r.max,
                     r.max_inclusive ? ']' : ')');
}

bool is_in(double x, const NumberRange& r) {
  const bool above = r.min_inclusive ? x >= r.min : x > r.min;
  const bool below = r.max_inclusive ? x <= r.max : x < r.max;
  return above && below;
}

}  // namespace

std::string integer_error(const std::string& text, int64_t min, uint64_t max) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  const bool negative = !text.empty() && text.front() == '-';
  int64_t signed_value = 0;
  uint64_t value = 0;
  const auto [stop, ec] =
      negative ? std::from_chars(begin, end, signed_value) : std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    return negative ? fmt::format("expected {}, got {}", expected_integer(min), text)
                    : fmt::format("expected an integer of at most {}, got {}", max, text);
  }
  if (text.empty() || ec != std::errc() || stop != end) {
    return fmt::format("'{}' is not an integer", text);
  }
  if (negative ? signed_value < min : min > 0 && value < static_cast<uint64_t>(min)) {
    return fmt::format("expected {}, got {}", expected_integer(min), text);
  }
  if (!negative && value > max) {
    return fmt::format("expected an integer of at most {}, got {}", max, text);
  }
  return "";
}

std::string number_error(const std::string& text, const NumberRange& range) {
  double x = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(x)) {
    return fmt::format("'{}' is not a number", text);
  }
  if (!is_in(x, range)) return fmt::format("expected {}, got {}", expected_number(range), text);
  return "";
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) { return number_error(text, {.min = 0, .min_inclusive = false}); },
      "POSITIVE");
}

CLI::Validator non_negative_number() {
  return CLI::Validator([](std::string& text) { return number_error(text, {.min = 0}); },
                        "NONNEGATIVE");
}

CLI::Validator fraction() {
  return CLI::Validator([](std::string& text) { return number_error(text, {.min = 0, .max = 1}); },
                        "[0, 1)");
}

CLI::Validator one_of(std::vector<std::string> names) {
  std::string desc = fmt::format("{}", fmt::join(names, "|"));
  return CLI::Validator(
      [names = std::move(names)](std::string& text) -> std::string {
        for (const std::string& n : names) {
          if (n == text) return "";
        }
        return fmt::format("'{}' is not one of {}", text, fmt::join(names, ", "));
      },
      desc);
}

CLI::Validator existing_device() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Device device;
        try {
          device = parse_device(text);
        } catch (const Error&) {
          return fmt::format("cannot read '{}' as a device, expected cpu:N", text);
        }
        if (device.is_cpu() && device.id < num_cpu_devices()) return "";
        std::vector<std::string> known;
        for (int i = 0; i < num_cpu_devices(); ++i) known.push_back(fmt::format("cpu:{}", i));
        return fmt::format(
            "device {} does not exist, expected one of: {} (JANUS_CPU_DEVICES=N splits the cores "
            "into N cpu devices)",
            text, fmt::join(known, ", "));
      },
      "DEVICE");
}

namespace {

// "" when `text` is a valid device list (its devices in `out`); otherwise what is wrong.
std::string device_list_error(const std::string& text, std::vector<Device>& out) {
  out.clear();
  if (text.empty())
    return "the list is empty, expected devices separated by commas, e.g. cpu:0,cpu:1";
  std::vector<std::string> items;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma == std::string::npos ? comma : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  for (const std::string& item : items) {
    if (item.empty()) {
      return fmt::format(
          "'{}' has an empty item, expected devices separated by commas, e.g. "
          "cpu:0,cpu:1",
          text);
    }
    Device device;
    try {
      device = parse_device(item);
    } catch (const Error&) {
      return fmt::format("cannot read '{}' as a device, expected cpu:N", item);
    }
    if (!device.is_cpu()) {
      return fmt::format("device {} is not available: Janus has no GPU kernels yet, expected cpu:N",
                         item);
    }
    if (device.id >= kMaxDevicesPerType) {
      return fmt::format("device {}: expected an id below {}", item, kMaxDevicesPerType);
    }
    for (const Device& seen : out) {
      if (seen == device) {
        return fmt::format("device {} appears twice in '{}'; give each device once", item, text);
      }
    }
    out.push_back(device);
  }
  return "";
}

}  // namespace

CLI::Validator device_list() {
  return CLI::Validator(
      [](std::string& text) {
        std::vector<Device> devices;
        return device_list_error(text, devices);
      },
      "DEVICES");
}

std::vector<Device> parse_device_list(const std::string& text) {
  std::vector<Device> devices;
  const std::string error = device_list_error(text, devices);
  JANUS_CHECK(error.empty(), ValueError, "{}", error);
  return devices;
}

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        const auto status = std::filesystem::status(text, ec);
        if (!std::filesystem::exists(status)) return fmt::format("'{}' does not exist", text);
        if (!std::filesystem::is_regular_file(status)) {
          return fmt::format("'{}' is not a file", text);
        }
        return "";
      },
      "FILE");
}

std::string parse_error_text(const CLI::ParseError& e) {
  std::string text = e.what();
  if (!text.empty()) text.front() = static_cast<char>(std::tolower(text.front()));
  return text;
}

}  // namespace janus::cli
