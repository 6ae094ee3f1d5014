// The cached oneDNN matmul primitives behind dot and matmul. A cached product keeps its memory
// objects in a pool of bindings (one per concurrent run), so a run builds no oneDNN object: it
// only swaps the data pointers in (set_data_handle).
#include "gemm.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "onednn.h"
#include "primitive_cache.h"

namespace janus::ops {
namespace {

dnnl::memory::desc matrix_desc(int64_t rows, int64_t cols, bool transposed) {
  // Logical [rows, cols]; stored row-major as [rows, cols], or as [cols, rows] if transposed.
  const dnnl::memory::dims strides =
      transposed ? dnnl::memory::dims{1, rows} : dnnl::memory::dims{cols, 1};
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, strides);
}

// What one run needs besides the primitive: memory objects for A, B and C (their data handles
// set per run) in the argument map that execute takes.
struct Bindings {
  dnnl::memory a, b, c;
  std::unordered_map<int, dnnl::memory> args;
};

}  // namespace

class CachedGemm {
 public:
  explicit CachedGemm(const GemmKey& key)
      : a_md_(matrix_desc(key.m, key.k, key.ta)),
        b_md_(matrix_desc(key.k, key.n, key.tb)),
        c_md_(matrix_desc(key.m, key.n, false)),
        // A scratchpad of the caller's thread (onednn_scratchpad): with oneDNN's own, one
        // primitive run on two threads at once (two devices, the same shape) shares one
        // scratchpad, and both products come out wrong.
        pd_(dnnl::matmul::desc(a_md_, b_md_, c_md_), onednn_attr(), onednn_engine()),
        prim_(pd_),
        macs_(key.m * key.n * key.k) {}

  std::string impl() const { return pd_.impl_info_str(); }

  void run(const void* a, const void* b, void* c) const {
    Lease lease(*this);
    Bindings& bind = *lease.bindings;
    bind.a.set_data_handle(const_cast<void*>(a));
    bind.b.set_data_handle(const_cast<void*>(b));
    bind.c.set_data_handle(c);
    bind.args[DNNL_ARG_SCRATCHPAD] = onednn_scratchpad(pd_.scratchpad_desc());
    const auto one_thread = ScopedOmpThreads::one_thread_if(macs_ < kParallelGemmMacs);
    dnnl::stream& stream = onednn_stream();
    prim_.execute(stream, bind.args);
    stream.wait();
  }

 private:
  // Bindings taken from the idle pool (or built) for one run, and given back after it.
  struct Lease {
    explicit Lease(const CachedGemm& g) : gemm(g) {
      {
        std::lock_guard lock(gemm.mu_);
        if (!gemm.idle_.empty()) {
          bindings = std::move(gemm.idle_.back());
          gemm.idle_.pop_back();
        }
      }
      if (!bindings) bindings = gemm.make_bindings();
    }
    ~Lease() {
      std::lock_guard lock(gemm.mu_);
      gemm.idle_.push_back(std::move(bindings));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    const CachedGemm& gemm;
    std::unique_ptr<Bindings> bindings;
  };

  std::unique_ptr<Bindings> make_bindings() const {
    dnnl::engine& eng = onednn_engine();
    auto bind = std::make_unique<Bindings>();
    bind->a = dnnl::memory(a_md_, eng, nullptr);
    bind->b = dnnl::memory(b_md_, eng, nullptr);
    bind->c = dnnl::memory(c_md_, eng, nullptr);
    bind->args = {{DNNL_ARG_SRC, bind->a}, {DNNL_ARG_WEIGHTS, bind->b}, {DNNL_ARG_DST, bind->c}};
    return bind;
  }

  dnnl::memory::desc a_md_, b_md_, c_md_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  int64_t macs_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Bindings>> idle_;  // at most one per concurrent run
};

bool uses_onednn(const GemmKey& key, DType dtype) {
  return dtype == DType::kFloat32 && key.m > 0 && key.n > 0 && key.k > 0;
}

const CachedGemm& cached_gemm(const GemmKey& key) {
  return primitive_cache<GemmKey, CachedGemm>().get(key, [&key](const CachedGemm& probe) {
    std::vector<float> a(static_cast<size_t>(key.m * key.k));
    std::vector<float> b(static_cast<size_t>(key.k * key.n));
    std::vector<float> c(static_cast<size_t>(key.m * key.n));
    probe.run(a.data(), b.data(), c.data());
  });
}

void run_gemm(const CachedGemm& gemm, const void* a, const void* b, void* c) { gemm.run(a, b, c); }

}  // namespace janus::ops
