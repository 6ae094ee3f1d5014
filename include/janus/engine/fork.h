// The engine of a process created by fork() from one that used Janus. Layer: engine.
#pragma once

namespace janus {

/// Replaces the process-wide engine by a naive one (operations run synchronously on the
/// calling thread, their kernels single-threaded) without touching the engine inherited from the
/// parent: its worker threads exist only in the parent, so waiting on it would hang and destroying
/// it would join threads that are not there (it is leaked). For the child of fork(), as its first
/// Janus call; the parent forks while its engine is idle (after wait_all), so that no lock of the
/// engine is copied held. Arrays inherited from the parent are usable in the child.
void use_naive_engine_after_fork();

}  // namespace janus
