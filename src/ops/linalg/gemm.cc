// The cached oneDNN matmul primitives behind dot and matmul.
#include "gemm.h"

#include <map>
#include <mutex>
#include <vector>

#include "onednn.h"

namespace janus::ops {
namespace {

dnnl::memory::desc matrix_desc(int64_t rows, int64_t cols, bool transposed) {
  // Logical [rows, cols]; stored row-major as [rows, cols], or as [cols, rows] if transposed.
  const dnnl::memory::dims strides =
      transposed ? dnnl::memory::dims{1, rows} : dnnl::memory::dims{cols, 1};
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, strides);
}

std::mutex g_cache_mu;
std::map<GemmKey, dnnl::matmul>& gemm_cache() {
  static auto* cache = new std::map<GemmKey, dnnl::matmul>();  // lives until exit
  return *cache;
}

void execute(const dnnl::matmul& prim, const GemmKey& key, const void* a, const void* b,
             void* c) {
  dnnl::engine& eng = onednn_engine();
  dnnl::memory ma(matrix_desc(key.m, key.k, key.ta), eng, const_cast<void*>(a));
  dnnl::memory mb(matrix_desc(key.k, key.n, key.tb), eng, const_cast<void*>(b));
  dnnl::memory mc(matrix_desc(key.m, key.n, false), eng, c);
  dnnl::stream stream(eng);
  prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  stream.wait();
}

}  // namespace

bool uses_onednn(const GemmKey& key, DType dtype) {
  return dtype == DType::kFloat32 && key.m > 0 && key.n > 0 && key.k > 0;
}

const dnnl::matmul& cached_gemm(const GemmKey& key) {
  std::lock_guard lock(g_cache_mu);
  auto& cache = gemm_cache();
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto pd = dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(matrix_desc(key.m, key.k, key.ta), matrix_desc(key.k, key.n, key.tb),
                         matrix_desc(key.m, key.n, false)),
      onednn_engine());
  const dnnl::matmul& prim = cache.emplace(key, dnnl::matmul(pd)).first->second;
  settle_onednn_state(pd.impl_info_str(), [&] {
    std::vector<float> a(static_cast<size_t>(key.m * key.k));
    std::vector<float> b(static_cast<size_t>(key.k * key.n));
    std::vector<float> c(static_cast<size_t>(key.m * key.n));
    execute(prim, key, a.data(), b.data(), c.data());
  });
  return prim;
}

void run_gemm(const dnnl::matmul& prim, const GemmKey& key, const void* a, const void* b,
              void* c) {
  execute(prim, key, a, b, c);
}

}  // namespace janus::ops
