// The oneDNN CPU engine shared by every oneDNN-backed kernel.
#include "onednn.h"

#include <cstddef>
#include <mutex>
#include <set>
#include <vector>

#include "janus/engine/engine.h"

namespace janus::ops {
namespace {

// One 1x1x1 matmul: creates and runs a primitive, so that oneDNN's lazy static state (ISA
// detection, primitive cache, scratchpads) exists before the exit drain is registered.
void warm_up(dnnl::engine& eng) {
  const ScopedOmpThreads one_thread(1);  // no OpenMP team on a frontend thread (ops::run_prepare)
  const dnnl::memory::desc md({1, 1}, dnnl::memory::data_type::f32, dnnl::memory::dims{1, 1});
  float a = 1.0f, b = 1.0f, c = 0.0f;
  dnnl::memory ma(md, eng, &a), mb(md, eng, &b), mc(md, eng, &c);
  dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
  dnnl::stream stream(eng);
  prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  stream.wait();
}

}  // namespace

dnnl::engine& onednn_engine() {
  static dnnl::engine* engine = [] {
    auto* eng = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // lives until exit
    warm_up(*eng);
    drain_engine_at_exit();
    return eng;
  }();
  return *engine;
}

dnnl::primitive_attr onednn_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::stream& onednn_stream() {
  thread_local dnnl::stream stream(onednn_engine());
  return stream;
}

dnnl::memory onednn_scratchpad(const dnnl::memory::desc& md) {
  thread_local std::vector<std::byte> buffer;
  const size_t bytes = md.get_size();
  if (buffer.size() < bytes) buffer.resize(bytes);
  return dnnl::memory(md, onednn_engine(), buffer.data());
}

void settle_onednn_state(const std::string& impl, const std::function<void()>& run_once) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>();  // lives until exit
  {
    std::lock_guard lock(mu);
    // On one thread: no OpenMP team on a frontend thread (see ops::run_prepare).
    const ScopedOmpThreads one_thread(1);
    if (seen->insert(impl).second) run_once();
  }
  drain_engine_at_exit();
}

void settle_after_first_run(std::atomic<bool>& ran) {
  if (!ran.exchange(true)) drain_engine_at_exit();
}

}  // namespace janus::ops
