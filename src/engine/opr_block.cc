// What the naive and threaded engines share: dependency lists, running a kernel, the error log.
#include "opr_block.h"

#include <atomic>
#include <chrono>

#include "janus/base/error.h"

namespace janus {

void set_dependencies(OprBlock* op, std::span<Var* const> reads, std::span<Var* const> writes) {
  for (Var* v : writes) {
    JANUS_CHECK(v != nullptr, ValueError, "engine: push of '{}' lists a null var to write",
                op->name);
    if (!op->writes.contains(v)) op->writes.push_back(v);
  }
  for (Var* v : reads) {
    JANUS_CHECK(v != nullptr, ValueError, "engine: push of '{}' lists a null var to read",
                op->name);
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
    if (v->poisoned()) return v->error();
  }
  for (Var* v : op->writes) {
    if (v->poisoned()) return v->error();
  }
  return nullptr;
}

std::exception_ptr capture_kernel_error(const std::string& name, std::string_view hint) {
  const std::string context =
      fmt::format("operator '{}' failed", name.empty() ? "<unnamed>" : name);
  auto with_hint = [hint](OperatorError e) {
    if (!hint.empty()) e.add_hint(hint);
    return std::make_exception_ptr(std::move(e));
  };
  try {
    throw;
  } catch (Error& e) {
    e.add_context(context);  // keeps the error's type, so callers can catch ShapeError etc.
    if (!hint.empty()) e.add_hint(hint);
    return std::current_exception();
  } catch (const std::exception& e) {
    return with_hint(OperatorError(fmt::format("{}: {}", context, e.what())));
  } catch (...) {
    return with_hint(
        OperatorError(fmt::format("{}: an exception that is not a std::exception", context)));
  }
}

std::atomic<OpListener*> g_op_listener{nullptr};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void set_op_listener(OpListener* listener) {
  g_op_listener.store(listener, std::memory_order_release);
}

bool op_listener_installed() { return g_op_listener.load(std::memory_order_relaxed) != nullptr; }

void report_operation(std::string_view name, const OpDetail& detail, Device device, Lane lane,
                      int64_t start_ns, int64_t end_ns) {
  OpListener* listener = g_op_listener.load(std::memory_order_acquire);
  if (listener != nullptr) listener->on_operation(name, detail, device, lane, start_ns, end_ns);
}

int64_t op_clock_ns() { return now_ns(); }

namespace {

// Runs the kernel, then waits for the work it issued on the worker's stream: the operation
// is complete, and may release its vars, only when that work is (an asynchronous failure
// there is the operation's error).
void run_kernel(OprBlock* op, const RunContext& ctx) {
  op->fn(ctx);
  if (ctx.stream != nullptr) ctx.stream->synchronize();
}

// Runs the kernel and, when a listener is installed, tells it what ran and when.
void run_timed(OprBlock* op, const RunContext& ctx) {
  OpListener* listener = g_op_listener.load(std::memory_order_acquire);
  if (listener == nullptr) {
    run_kernel(op, ctx);
    return;
  }
  const int64_t start = now_ns();
  struct Report {
    OpListener* listener;
    OprBlock* op;
    const RunContext& ctx;
    int64_t start;
    ~Report() {
      listener->on_operation(op->name, op->detail, ctx.device, ctx.lane, start, now_ns());
    }
  } report{listener, op, ctx, start};
  run_kernel(op, ctx);
}

}  // namespace

void run_operation(OprBlock* op, const RunContext& ctx, ErrorLog& log, std::string_view hint) {
  // Assigned only when set, so that a worker writes the error's line only when something
  // failed: the pusher rewrites every line of a recycled operation.
  if (std::shared_ptr<ErrorRecord> inherited = inherited_error(op)) {
    op->error = std::move(inherited);
    return;
  }
  try {
    run_timed(op, ctx);
  } catch (...) {
    op->error = std::make_shared<ErrorRecord>();
    op->error->error = capture_kernel_error(op->name, hint);
    log.add(op->error);
  }
}

void rethrow_if_error(const std::shared_ptr<ErrorRecord>& record) {
  if (!record) return;
  record->reported.store(true);
  std::rethrow_exception(record->error);
}

}  // namespace janus
