// The oneDNN CPU engine and stream shared by the oneDNN-backed kernels. Private to src/ops.
#pragma once

#include <dnnl.hpp>

#include <functional>
#include <string>

namespace janus::ops {

/// The process's oneDNN CPU engine (created once, thread-safe). The first call also runs one
/// tiny matmul, so that oneDNN's lazily created static state exists, and then registers the
/// engine's exit drain again: kernels still in flight at exit finish before that state is
/// destroyed. Operator functions call it on the frontend thread before pushing.
dnnl::engine& onednn_engine();

/// Attributes for every primitive Janus builds: a user-managed scratchpad. oneDNN's default
/// (library) scratchpad belongs to the thread that created the primitive, but kernels run on
/// engine workers, so each execution passes its own (onednn_scratchpad).
dnnl::primitive_attr onednn_attr();

/// Scratchpad memory for `md` (a primitive descriptor's scratchpad_desc()) from a buffer owned
/// by the calling thread, grown as needed. Valid until the thread's next call.
dnnl::memory onednn_scratchpad(const dnnl::memory::desc& md);

/// The first time an implementation (primitive_desc::impl_info_str()) is seen, runs `run_once`
/// on the caller's thread: the first execution of an implementation creates static state inside
/// oneDNN. Then registers the engine's exit drain again, so a kernel still running at exit
/// finishes before any of that state is destroyed. Call it from an operator's `prepare` after
/// building a new primitive.
void settle_onednn_state(const std::string& impl, const std::function<void()>& run_once);

}  // namespace janus::ops
