// The cached oneDNN matmul primitives behind dot and matmul. A cached product keeps its memory
// objects (OneDnnBindings), so a run builds no oneDNN object: it only swaps the data pointers in.
#include "gemm.h"

#include <string>
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

}  // namespace

class CachedGemm {
 public:
  explicit CachedGemm(const GemmKey& key)
      : pd_(dnnl::matmul::desc(matrix_desc(key.m, key.k, key.ta), matrix_desc(key.k, key.n, key.tb),
                               matrix_desc(key.m, key.n, false)),
            onednn_attr(), onednn_engine()),
        prim_(pd_),
        bindings_({{DNNL_ARG_SRC, pd_.src_desc()},
                   {DNNL_ARG_WEIGHTS, pd_.weights_desc()},
                   {DNNL_ARG_DST, pd_.dst_desc()}},
                  pd_.scratchpad_desc()),
        macs_(key.m * key.n * key.k) {}

  std::string impl() const { return pd_.impl_info_str(); }

  void run(const void* a, const void* b, void* c) const {
    const auto one_thread = ScopedOmpThreads::one_thread_if(macs_ < kParallelGemmMacs);
    bindings_.run(prim_, {a, b, c});
  }

 private:
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  OneDnnBindings bindings_;
  int64_t macs_;
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
