# The CUDA build (-DJANUS_CUDA=ON, preset cuda): nvcc compiles src/**/*.cu beside the C++
# sources, and the libraries link the CUDA runtime, cuBLAS and cuDNN. Everything comes from the
# toolkit in /usr/local/cuda (cuDNN ships in its folders, not as a CMake package). Included
# from the top-level CMakeLists.txt; src/CMakeLists.txt adds the sources and the links.
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
# The GPUs lent to this project are H100 and H200 (compute capability 9.0). "native" would fail
# on the machines that build without a GPU.
if(NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
if(JANUS_CCACHE AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
  set(CMAKE_CUDA_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1 ${JANUS_CCACHE})
endif()
enable_language(CUDA)
# C++20 like the rest. CMake 3.25 (Debian 12) knows nvcc's flags only up to C++17 and refuses
# CUDA20 (which the C++ standard of the layers' targets implies for their .cu files): teach it.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)

find_package(CUDAToolkit REQUIRED)
find_library(JANUS_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
find_path(JANUS_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
message(STATUS "CUDA ${CUDAToolkit_VERSION} (${CUDAToolkit_BIN_DIR}), cuDNN ${JANUS_CUDNN_LIBRARY}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES}")

# What a layer with .cu sources, and every library holding its objects, links.
add_library(janus_cuda_toolkit INTERFACE)
target_link_libraries(janus_cuda_toolkit INTERFACE CUDA::cudart CUDA::cublas ${JANUS_CUDNN_LIBRARY})
target_include_directories(janus_cuda_toolkit INTERFACE ${JANUS_CUDNN_INCLUDE_DIR})
