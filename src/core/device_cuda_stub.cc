// The CUDA runtime's view in a build without CUDA: nothing to ask. The CUDA build compiles
// device_cuda.cu instead (JANUS_WITH_CUDA, set on the core layer by cmake/cuda.cmake).
#include "janus/core/device_cuda.h"

#if !JANUS_WITH_CUDA
namespace janus {

const CudaRuntimeInfo& cuda_runtime_info() {
  static const CudaRuntimeInfo info{.status = "this build of Janus has no CUDA backend"};
  return info;
}

}  // namespace janus
#endif
