// What the CUDA runtime reports to this process: the devices it sees and the versions of the
// runtime, driver, cuBLAS and cuDNN that the build links. Layer: core.
#pragma once

#include <string>

namespace janus {

struct CudaRuntimeInfo {
  bool built = false;       // this build links the CUDA toolkit (JANUS_CUDA=ON)
  int devices = 0;          // cudaGetDeviceCount; 0 when it fails
  std::string status;       // why there are no devices ("cudaErrorNoDevice: ..."); else empty
  int runtime_version = 0;  // cudaRuntimeGetVersion: 1000 * major + 10 * minor
  int driver_version = 0;   // cudaDriverGetVersion: 0 when no driver is installed
  int cublas_version = 0;   // 10000 * major + 100 * minor + patch of the cuBLAS loaded
  int cudnn_version = 0;    // cudnnGetVersion of the cuDNN loaded
};

/// Asks the CUDA runtime once per process (later calls return the first answer). Never
/// throws and never needs a GPU: without a driver or device, `devices` is 0 and `status` says
/// why. In a build without CUDA, `built` is false, `status` says so and the numbers are 0.
const CudaRuntimeInfo& cuda_runtime_info();

}  // namespace janus
