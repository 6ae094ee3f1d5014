// Factories of the engine implementations. Private to src/engine.
#pragma once

#include <memory>

#include "janus/engine/engine.h"

namespace janus {

std::unique_ptr<Engine> make_naive_engine(const EngineOptions& options);
std::unique_ptr<Engine> make_threaded_engine(const EngineOptions& options);

/// True on a thread that runs engine operations (worker threads must never block on the
/// engine: back-pressure skips them and blockers refuse to run there).
bool is_engine_worker_thread();
void mark_engine_worker_thread();

}  // namespace janus
