// The oneDNN CPU engine and stream shared by the oneDNN-backed kernels. Private to src/ops.
#pragma once

#include <dnnl.hpp>

namespace janus::ops {

/// The process's oneDNN CPU engine (created once, thread-safe). The first call also runs one
/// tiny matmul, so that oneDNN's lazily created static state exists, and then registers the
/// engine's exit drain again: kernels still in flight at exit finish before that state is
/// destroyed. Operator functions call it on the frontend thread before pushing.
dnnl::engine& onednn_engine();

}  // namespace janus::ops
