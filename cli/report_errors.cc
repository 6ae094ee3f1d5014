// Our programs' last line of defence against exceptions.
#include "report_errors.h"

#include <exception>
#include <ostream>

#include "janus/base/error.h"

namespace janus::cli {

int run_reporting_errors(std::string_view command, const std::function<int()>& body,
                         std::ostream& err) {
  try {
    return body();
  } catch (const Error& e) {
    err << command << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    err << command << ": unexpected error (please report): " << e.what() << "\n";
  } catch (...) {
    err << command << ": unexpected error of an unknown type (please report)\n";
  }
  return 1;
}

}  // namespace janus::cli
