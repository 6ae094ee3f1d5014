// The oneDNN CPU engine shared by every oneDNN-backed kernel.
#include "onednn.h"

#include <cstddef>
#include <mutex>
#include <set>
#include <vector>

#include "janus/base/error.h"
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

namespace {

// The calling thread's scratchpad buffer, grown to at least `bytes`.
void* scratchpad_buffer(size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace

dnnl::memory onednn_scratchpad(const dnnl::memory::desc& md) {
  return dnnl::memory(md, onednn_engine(), scratchpad_buffer(md.get_size()));
}

struct OneDnnBindings::Set {
  std::vector<dnnl::memory> memories;  // in the order of args_
  dnnl::memory scratchpad;
  std::unordered_map<int, dnnl::memory> args;  // what execute takes, on the same objects
};

OneDnnBindings::OneDnnBindings(std::initializer_list<std::pair<int, dnnl::memory::desc>> args,
                               dnnl::memory::desc scratchpad)
    : args_(args), scratchpad_(std::move(scratchpad)) {}

OneDnnBindings::~OneDnnBindings() = default;

OneDnnBindings::Lease OneDnnBindings::lease() const {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Set> set = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(set));
    }
  }
  dnnl::engine& eng = onednn_engine();
  auto set = std::make_unique<Set>();
  for (const auto& [id, md] : args_) {
    set->memories.emplace_back(md, eng, nullptr);
    set->args.emplace(id, set->memories.back());
  }
  if (scratchpad_.get_size() > 0) {
    set->scratchpad = dnnl::memory(scratchpad_, eng, nullptr);
    set->args.emplace(DNNL_ARG_SCRATCHPAD, set->scratchpad);
  }
  return Lease(*this, std::move(set));
}

void OneDnnBindings::run(const dnnl::primitive& prim,
                         std::initializer_list<const void*> data) const {
  Lease lease = this->lease();
  lease.bind(data);
  lease.execute(prim);
}

OneDnnBindings::Lease::Lease(const OneDnnBindings& owner, std::unique_ptr<Set> set)
    : owner_(owner), set_(std::move(set)) {}

OneDnnBindings::Lease::~Lease() {
  std::lock_guard lock(owner_.mu_);
  owner_.idle_.push_back(std::move(set_));
}

void OneDnnBindings::Lease::bind(std::initializer_list<const void*> data) {
  JANUS_ASSERT(data.size() == set_->memories.size(),
               "OneDnnBindings: {} data pointers for {} arguments", data.size(),
               set_->memories.size());
  size_t i = 0;
  for (const void* d : data) set_->memories[i++].set_data_handle(const_cast<void*>(d));
}

void OneDnnBindings::Lease::execute(const dnnl::primitive& prim) {
  // The primitive is shared by every thread (two devices may run it at once): each run brings
  // its thread's scratchpad, since oneDNN's library scratchpad belongs to the creating thread
  // and cannot serve two runs at once.
  const size_t bytes = owner_.scratchpad_.get_size();
  if (bytes > 0) set_->scratchpad.set_data_handle(scratchpad_buffer(bytes));
  dnnl::stream& stream = onednn_stream();
  prim.execute(stream, set_->args);
  stream.wait();
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
