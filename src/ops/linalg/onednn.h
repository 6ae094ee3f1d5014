// The oneDNN CPU engine and stream shared by the oneDNN-backed kernels. Private to src/ops.
#pragma once

#include <dnnl.hpp>

namespace janus::ops {

/// The process's oneDNN CPU engine (created once, thread-safe).
dnnl::engine& onednn_engine();

}  // namespace janus::ops
