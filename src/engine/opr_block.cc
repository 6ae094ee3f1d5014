// What the naive and threaded engines share: dependency lists, running a kernel, the error log.
#include "opr_block.h"

#include "janus/base/error.h"

namespace janus {

void set_dependencies(OprBlock* op, std::span<Var* const> reads, std::span<Var* const> writes) {
  for (Var* v : writes) {
    JANUS_CHECK(v != nullptr, ValueError, "engine: push of '{}' lists a null var to write", op->name);
    if (!op->writes.contains(v)) op->writes.push_back(v);
  }
  for (Var* v : reads) {
    JANUS_CHECK(v != nullptr, ValueError, "engine: push of '{}' lists a null var to read", op->name);
    if (!op->writes.contains(v) && !op->reads.contains(v)) op->reads.push_back(v);
  }
}

void ErrorLog::add(std::shared_ptr<ErrorRecord> record) {
  std::lock_guard lock(mu_);
  errors_.push_back(std::move(record));
}

std::shared_ptr<ErrorRecord> ErrorLog::take_unreported() {
  std::lock_guard lock(mu_);
  std::shared_ptr<ErrorRecord> first;
  for (auto& e : errors_) {
    if (!e->reported.exchange(true)) {
      first = e;
      break;
    }
  }
  errors_.clear();
  return first;
}

namespace {

std::shared_ptr<ErrorRecord> inherited_error(const OprBlock* op) {
  for (Var* v : op->reads) {
    if (auto e = v->error()) return e;
  }
  for (Var* v : op->writes) {
    if (auto e = v->error()) return e;
  }
  return nullptr;
}

std::exception_ptr capture_kernel_error(const std::string& name) {
  const std::string context = fmt::format("operator '{}' failed", name.empty() ? "<unnamed>" : name);
  try {
    throw;
  } catch (Error& e) {
    e.add_context(context);  // keeps the error's type, so callers can catch ShapeError etc.
    return std::current_exception();
  } catch (const std::exception& e) {
    return std::make_exception_ptr(OperatorError(fmt::format("{}: {}", context, e.what())));
  } catch (...) {
    return std::make_exception_ptr(
        OperatorError(fmt::format("{}: an exception that is not a std::exception", context)));
  }
}

}  // namespace

void run_operation(OprBlock* op, const RunContext& ctx, ErrorLog& log) {
  op->error = inherited_error(op);
  if (op->error) return;
  try {
    op->fn(ctx);
  } catch (...) {
    op->error = std::make_shared<ErrorRecord>();
    op->error->error = capture_kernel_error(op->name);
    log.add(op->error);
  }
}

void rethrow_if_error(const std::shared_ptr<ErrorRecord>& record) {
  if (!record) return;
  record->reported.store(true);
  std::rethrow_exception(record->error);
}

}  // namespace janus
