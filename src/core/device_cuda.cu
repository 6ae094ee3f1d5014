// The CUDA runtime's view of this process, in the CUDA build (JANUS_CUDA=ON). Host code only,
// compiled by nvcc: it queries the runtime, cuBLAS and cuDNN and launches nothing, so it runs
// (and is tested) on machines without a GPU or driver. device_cuda_stub.cc replaces it in
// builds without CUDA. No fmt here: nvcc 13's front end rejects fmt 9's consteval
// format-string check ("call to consteval function ... did not produce a valid constant
// expression"), so .cu files cannot include headers that format (janus/base/error.h).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "janus/core/device_cuda.h"

namespace janus {
namespace {

CudaRuntimeInfo query_cuda_runtime() {
  CudaRuntimeInfo info;
  info.built = true;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) {
    info.devices = count;
  } else if (status == cudaSuccess) {
    info.status = "cudaGetDeviceCount found 0 devices";
  } else {
    info.status = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(status) + ": " +
                  cudaGetErrorString(status);
    cudaGetLastError();  // clear the runtime's sticky error so later calls start clean
  }
  cudaRuntimeGetVersion(&info.runtime_version);
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) info.driver_version = 0;
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    info.cublas_version = 10000 * major + 100 * minor + patch;
  }
  info.cudnn_version = static_cast<int>(cudnnGetVersion());
  return info;
}

}  // namespace

const CudaRuntimeInfo& cuda_runtime_info() {
  static const CudaRuntimeInfo info = query_cuda_runtime();
  return info;
}

}  // namespace janus
