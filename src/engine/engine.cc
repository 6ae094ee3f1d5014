// The process-wide engine: chosen by JANUS_ENGINE, replaced by set_engine, drained at exit.
#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "janus/base/error.h"
#include "janus/base/logging.h"
#include "janus/engine/fork.h"
#include "janus/engine/wait_poll.h"

#include "engine_impl.h"

namespace janus {
namespace {

int64_t env_int(const char* name, int64_t fallback, int64_t min_value) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  JANUS_CHECK(end != env && *end == '\0' && v >= min_value, ValueError,
              "engine: environment variable {}='{}' is not an integer >= {}", name, env, min_value);
  return v;
}

EngineKind kind_from_env() {
  const char* env = std::getenv("JANUS_ENGINE");
  if (env == nullptr || *env == '\0') return EngineKind::kThreaded;
  const std::string v(env);
  if (v == "naive") return EngineKind::kNaive;
  if (v == "threaded") return EngineKind::kThreaded;
  JANUS_THROW(ValueError, "engine: JANUS_ENGINE='{}' is not known, expected naive or threaded", v);
}

// The current engine. Never destroyed by static destruction: arrays released during static
// destruction still find it (drained and stopped by then, it releases their memory at once).
std::atomic<Engine*> g_engine{nullptr};
std::mutex g_engine_mu;

void shutdown_at_exit() {
  Engine* e = g_engine.load();
  // Already shut down (the handler may be registered several times): nothing to do.
  if (e == nullptr || e->kind() == EngineKind::kNaive || is_engine_worker_thread()) return;
  // Finish the work in flight, then stop the workers; replace with a naive engine so that
  // anything pushed during static destruction still runs (synchronously) instead of hanging.
  // Drain before the swap: finishing kernels drop the arrays they captured, and those releases
  // must reach this engine, whose operations still use the vars (the naive engine would free a
  // var at once, under a running operation).
  try {
    e->wait_all();
  } catch (...) {  // errors that nobody waited for end with the process
  }
  std::lock_guard lock(g_engine_mu);
  auto naive = make_naive_engine(engine_options_from_env());
  g_engine.store(naive.release());
  delete e;  // drains and joins the workers
}

thread_local const ScopedWaitPoll* tls_wait_poll = nullptr;

}  // namespace

ScopedWaitPoll::ScopedWaitPoll(std::chrono::milliseconds slice, const WaitPoll& poll)
    : slice_(slice), poll_(poll), outer_(tls_wait_poll) {
  tls_wait_poll = this;
}

ScopedWaitPoll::~ScopedWaitPoll() { tls_wait_poll = outer_; }

const ScopedWaitPoll* ScopedWaitPoll::current() { return tls_wait_poll; }

void drain_engine_at_exit() { std::atexit(shutdown_at_exit); }

EngineOptions engine_options_from_env() {
  EngineOptions o;
  o.cpu_compute_workers = static_cast<int>(env_int("JANUS_CPU_WORKERS", o.cpu_compute_workers, 1));
  o.max_in_flight = env_int("JANUS_MAX_IN_FLIGHT", o.max_in_flight, 1);
  return o;
}

std::unique_ptr<Engine> make_engine(EngineKind kind, const EngineOptions& options) {
  return kind == EngineKind::kNaive ? make_naive_engine(options) : make_threaded_engine(options);
}

std::string_view engine_kind_name(EngineKind kind) {
  return kind == EngineKind::kNaive ? "naive" : "threaded";
}

Engine& engine() {
  Engine* e = g_engine.load(std::memory_order_acquire);
  if (e != nullptr) [[likely]]
    return *e;
  std::lock_guard lock(g_engine_mu);
  e = g_engine.load(std::memory_order_relaxed);
  if (e == nullptr) {
    e = make_engine(kind_from_env(), engine_options_from_env()).release();
    g_engine.store(e, std::memory_order_release);
    std::atexit(shutdown_at_exit);
  }
  return *e;
}

void set_engine(EngineKind kind, const EngineOptions& options) {
  auto fresh = make_engine(kind, options);  // throws on bad options before anything changes
  Engine& old = engine();
  std::exception_ptr pending;
  try {
    old.wait_all();
  } catch (...) {
    pending = std::current_exception();  // swap anyway, then report it
  }
  {
    std::lock_guard lock(g_engine_mu);
    g_engine.store(fresh.release(), std::memory_order_release);
  }
  delete &old;
  if (pending) std::rethrow_exception(pending);
}

void use_naive_engine_after_fork() {
  // Neither g_engine_mu (a parent thread may have held it at the fork) nor the old engine is
  // touched: the child has one thread, which is here. Its kernels run single-threaded: the
  // OpenMP runtime's thread pool is the parent's too, and a parallel region in the child
  // would wait for threads that are not there (the naive engine reads the cap below).
  omp_set_num_threads(1);
  g_engine.store(make_naive_engine(engine_options_from_env()).release(), std::memory_order_release);
}

}  // namespace janus
