// Tests of device_cuda.h: what the CUDA runtime reports, in builds with and without CUDA, on
// machines with or without a GPU (each branch checks what must then hold).
#include "janus/core/device_cuda.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"
#include "janus/core/device.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

TEST(CudaRuntimeInfo, IsAskedOnce) { EXPECT_EQ(&cuda_runtime_info(), &cuda_runtime_info()); }

TEST(CudaRuntimeInfo, BuildWithoutCudaReportsNothing) {
  const CudaRuntimeInfo& info = cuda_runtime_info();
  if (info.built) GTEST_SKIP() << "a CUDA build: CudaRuntimeInfo.CudaBuildReportsItsLibraries";
  EXPECT_EQ(info.status, "this build of Janus has no CUDA backend");
  EXPECT_EQ(info.devices, 0);
  EXPECT_EQ(info.runtime_version, 0);
  EXPECT_EQ(info.cublas_version, 0);
  EXPECT_EQ(info.cudnn_version, 0);
}

// The CUDA build links the runtime, cuBLAS and cuDNN, and asks each of them for its version:
// that needs neither a driver nor a GPU, so it runs on the machines that build.
TEST(CudaRuntimeInfo, CudaBuildReportsItsLibraries) {
  const CudaRuntimeInfo& info = cuda_runtime_info();
  if (!info.built) GTEST_SKIP() << "a build without CUDA (preset cuda builds with it)";
  EXPECT_GE(info.runtime_version, 12000);  // CUDA 12 or later
  EXPECT_GE(info.cublas_version, 120000);
  EXPECT_GE(info.cudnn_version, 8000);
  EXPECT_GE(info.devices, 0);
  // Devices, or the runtime's reason for none (no driver: cudaErrorInsufficientDriver).
  if (info.devices == 0) {
    EXPECT_THAT(info.status, HasSubstr("cudaGetDeviceCount"));
  } else {
    EXPECT_EQ(info.status, "");
    EXPECT_GT(info.driver_version, 0);
  }
}

// gpu(i) is refused with the reason that holds in this build on this machine.
TEST(CudaRuntimeInfo, GpuDevicesAreRefusedWithTheReason) {
  const CudaRuntimeInfo& info = cuda_runtime_info();
  try {
    check_device(gpu(0), "to_device");
    ADD_FAILURE() << "check_device accepted gpu(0) with no GPU backend installed";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("to_device: device gpu(0) is not available: "));
    EXPECT_THAT(e.what(), HasSubstr("expected a cpu device"));
    if (!info.built) {
      EXPECT_THAT(e.what(), HasSubstr("this build of Janus has no CUDA backend"));
    } else if (info.devices == 0) {
      EXPECT_THAT(e.what(), HasSubstr("no CUDA device (cudaGetDeviceCount"));
    } else {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("the CUDA runtime sees {} device(s) but Janus "
                                                  "has no GPU kernels yet",
                                                  info.devices)));
    }
  }
}

}  // namespace
}  // namespace janus
