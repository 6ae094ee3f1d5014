// The oneDNN CPU engine shared by every oneDNN-backed kernel.
#include "onednn.h"

namespace janus::ops {

dnnl::engine& onednn_engine() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // lives until exit
  return *engine;
}

}  // namespace janus::ops
