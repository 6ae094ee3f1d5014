// How our programs end on an error: one line on stderr, "janus run: <message>", and exit
// status 1, whatever was thrown. Library janus_cli_common (cli/).
#pragma once

#include <functional>
#include <iosfwd>
#include <string_view>

namespace janus::cli {

/// Runs `body` and returns its status; when it throws, writes "`command`: <what>" and a newline
/// to `err` (janus::Error as it is, another std::exception or anything else as an unexpected
/// error to report) and returns 1. Never lets an exception reach std::terminate.
int run_reporting_errors(std::string_view command, const std::function<int()>& body,
                         std::ostream& err);

}  // namespace janus::cli
